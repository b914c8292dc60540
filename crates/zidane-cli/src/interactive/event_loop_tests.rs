use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures::channel::mpsc::{UnboundedSender, unbounded};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::{mpsc, watch};
use zidane::agent::WakeLoop;

use super::super::{forward, view};
use super::*;

/// Bound on each wait for a frame.
const STEP: Duration = Duration::from_secs(20);

/// A [`Surface`] on ratatui's `TestBackend` that keeps every frame it drew, as text.
struct Frames {
    terminal: Terminal<TestBackend>,
    drawn: watch::Sender<Vec<String>>,
}

impl Surface for Frames {
    fn draw(&mut self, app: &App) -> std::io::Result<()> {
        self.terminal.draw(|frame| {
            view::draw(frame, app);
        })?;
        let text = view::tests::text(self.terminal.backend().buffer());
        self.drawn.send_modify(|frames| frames.push(text));
        Ok(())
    }

    fn size(&self) -> std::io::Result<(u16, u16)> {
        let size = self.terminal.size()?;
        Ok((size.width, size.height))
    }
}

/// The demo model's session in a temp user dir, its loop on a `TestBackend`.
struct Session {
    host: Host,
    _dir: tempfile::TempDir,
    keys: UnboundedSender<std::io::Result<Event>>,
    events: mpsc::UnboundedSender<AppEvent>,
    drawn: watch::Receiver<Vec<String>>,
}

/// Runs `drive` beside the loop of a new session until the loop ends (a `ctrl+d` from
/// `drive`), then destroys the session's agent.
async fn with_session<F, Fut>(drive: F)
where
    F: FnOnce(Arc<Session>) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    let (model, model_name) = crate::demo::model();
    // No start-up sweep: it would end the orphans other tests make and look at.
    let agent = zidane::local_agent(model, dir.path())
        .sweep_orphans(false)
        .build()
        .unwrap();
    let wake = Arc::new(WakeLoop::spawn(agent.clone()));
    let host = Host {
        agent,
        wake,
        model_name,
        resumed: false,
        approver: Arc::default(),
    };
    let (events, mut inbox) = mpsc::unbounded_channel();
    let forwarding = forward(&host, &events);
    let tasks = TaskWatch::spawn(host.agent.clone(), events.clone());
    let (keys, key_stream) = unbounded();
    let (drawn, seen) = watch::channel(Vec::new());
    let mut surface = Frames {
        terminal: Terminal::new(TestBackend::new(80, 24)).unwrap(),
        drawn,
    };
    let mut app = App::new(host.model_name.clone(), host.agent.id());
    let session = Arc::new(Session {
        host,
        _dir: dir,
        keys,
        events: events.clone(),
        drawn: seen,
    });
    let inputs = Inputs {
        keys: key_stream,
        inbox: &mut inbox,
        events: &events,
        tasks: &tasks,
    };
    let ran = tokio::time::timeout(STEP * 3, async {
        tokio::join!(
            event_loop(
                &session.host,
                &mut app,
                &mut surface,
                inputs,
                std::future::pending()
            ),
            drive(Arc::clone(&session))
        )
    })
    .await;
    drop(tasks);
    forwarding.abort();
    let session = Arc::into_inner(session).unwrap();
    let report = session.host.shut_down().await.unwrap();
    assert!(report.survivors.is_empty());
    let (ended, ()) = ran.expect("the session ended by ctrl+d");
    ended.unwrap();
}

impl Session {
    fn key(&self, code: KeyCode, modifiers: KeyModifiers) {
        self.keys
            .unbounded_send(Ok(Event::Key(KeyEvent::new(code, modifiers))))
            .unwrap();
    }

    /// How many frames were drawn so far.
    fn draws(&self) -> usize {
        self.drawn.borrow().len()
    }

    /// Waits for a frame that shows what `wanted` looks for; returns its index and text.
    async fn frame(&self, what: &str, wanted: impl Fn(&str) -> bool) -> (usize, String) {
        let mut drawn = self.drawn.clone();
        let frames = tokio::time::timeout(
            STEP,
            drawn.wait_for(|frames| frames.iter().any(|frame| wanted(frame))),
        )
        .await
        .unwrap_or_else(|_| panic!("no frame shows {what}: {:?}", self.drawn.borrow().last()))
        .unwrap();
        let index = frames.iter().position(|frame| wanted(frame)).unwrap();
        (index, frames[index].clone())
    }

    fn quit(&self) {
        self.key(KeyCode::Char('d'), KeyModifiers::CONTROL);
    }
}

#[tokio::test]
async fn a_burst_of_keys_tokens_and_events_is_one_draw() {
    with_session(|session| async move {
        session.frame("the first frame", |_| true).await;
        let before = session.draws();
        // All of it is queued before the loop runs again: one burst.
        session
            .events
            .send(AppEvent::Note("the burst begins".into()))
            .unwrap();
        for _ in 0..200 {
            session.events.send(AppEvent::Delta("tok ".into())).unwrap();
            session.events.send(AppEvent::Changed).unwrap();
        }
        for c in "hello burst".chars() {
            session.key(KeyCode::Char(c), KeyModifiers::NONE);
        }
        let (index, frame) = session
            .frame("the whole burst", |frame| frame.contains("› hello burst"))
            .await;
        assert_eq!(index, before, "the burst took more than one draw");
        assert!(frame.contains("the burst begins"), "{frame}");
        assert_eq!(frame.matches("tok").count(), 200, "{frame}");
        session.quit();
    })
    .await;
}

#[tokio::test]
async fn the_task_count_follows_tasks_without_a_key() {
    with_session(|session| async move {
        session.frame("the first frame", |_| true).await;
        // The prompt goes to the wake loop directly: no key reaches the loop.
        let wake = Arc::clone(&session.host.wake);
        tokio::spawn(async move { wake.prompt("build it").await });
        session
            .frame("the running build counted", |frame| {
                frame.contains("Started bash_1") && frame.contains("· idle · ctrl+k cancel (1) ·")
            })
            .await;
        let (_, frame) = session
            .frame("the ended build no longer counted", |frame| {
                frame.contains("⌁ bash_1 exited (0)") && frame.contains("· ctrl+k cancel ·")
            })
            .await;
        assert!(!frame.contains("cancel (1)"), "{frame}");
        session.quit();
    })
    .await;
}

// Terminal tasks: Unix has them, Windows refuses them.
#[cfg(unix)]
#[tokio::test]
async fn attached_keys_reach_the_task_its_screen_follows_and_ctrl_bracket_returns() {
    with_session(|session| async move {
        session.frame("the first frame", |_| true).await;
        let wake = Arc::clone(&session.host.wake);
        tokio::spawn(async move { wake.prompt("ask me a question").await });
        session
            .frame("the task counted", |frame| {
                // The turn has ended: the one row is the task, not the call starting it.
                frame.contains("· idle · ctrl+k cancel (1)")
            })
            .await;
        session.key(KeyCode::Char('k'), KeyModifiers::CONTROL);
        session
            .frame("the picker", |frame| frame.contains("[tty]"))
            .await;
        session.key(KeyCode::Char('a'), KeyModifiers::NONE);
        let starts = |text: &'static str| {
            move |frame: &str| frame.lines().any(|line| line.starts_with(text))
        };
        let (_, frame) = session
            .frame("the question", starts("Deploy to which region? [eu/us]"))
            .await;
        assert!(frame.contains("ctrl+] detach"), "{frame}");
        // Resized to the window: all of it but the title, the newest entry, the footer.
        let size = session
            .host
            .agent
            .read_task_screen("bash_1")
            .await
            .unwrap()
            .size();
        assert_eq!(size, zidane::context::TtySize::new(21, 80));
        // A resized window resizes the task's terminal with it.
        session
            .keys
            .unbounded_send(Ok(Event::Resize(100, 30)))
            .unwrap();
        let resized = tokio::time::timeout(STEP, async {
            loop {
                let screen = session.host.agent.read_task_screen("bash_1").await.unwrap();
                if screen.size() == zidane::context::TtySize::new(27, 100) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        assert!(resized.is_ok(), "the terminal kept its size");

        for c in "eu".chars() {
            session.key(KeyCode::Char(c), KeyModifiers::NONE);
        }
        session.key(KeyCode::Enter, KeyModifiers::NONE);
        session
            .frame("the answer echoed and taken", starts("deploying to eu"))
            .await;
        let (_, frame) = session
            .frame("the end, while attached", |frame| {
                frame.contains("any key returns") && frame.contains("model › bash_1 ended:")
            })
            .await;
        assert!(frame.lines().any(|line| line == "deployed"), "{frame}");
        session.key(KeyCode::Char(']'), KeyModifiers::CONTROL);
        session
            .frame("the conversation again", |frame| {
                frame.contains("⌁ bash_1 exited (0)") && frame.contains("· ctrl+k cancel ·")
            })
            .await;
        session.quit();
    })
    .await;
}
