use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use zidane::agent::{ScriptedModel, async_trait};
use zidane::context::{
    ExecOptions, ExecOutput, ExecutionContext, ExecutionHandle, OutputChunk, ReadRange, ReadResult,
    Screen, TaskId,
};

use super::*;

/// Bound on each wait for the watch's next event.
const STEP: Duration = Duration::from_secs(10);

/// One task in a terminal whose screen, log length and end the test sets.
struct Terminal {
    screen: Mutex<Screen>,
    /// The log's length and whether the task ended.
    log: watch::Sender<(u64, bool)>,
    asked: Mutex<Vec<String>>,
    busy: Mutex<bool>,
}

impl Terminal {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            screen: Mutex::new(screen("$")),
            log: watch::Sender::new((0, false)),
            asked: Mutex::new(Vec::new()),
            busy: Mutex::new(false),
        })
    }

    /// The task draws `text` (and its log grows), or ends.
    fn draw(&self, text: &str, ended: bool) {
        *self.screen.lock().unwrap() = screen(text);
        self.log.send_modify(|(len, end)| {
            *len += 1;
            *end = ended;
        });
    }
}

fn screen(text: &str) -> Screen {
    Screen::new(TtySize::new(2, 10), vec![text.to_owned()], (0, 1))
}

#[async_trait]
impl ExecutionContext for Terminal {
    async fn create_handle(&self) -> zidane::context::Result<ExecutionHandle> {
        Ok(ExecutionHandle::new(1))
    }
    async fn destroy(&self, _: ExecutionHandle) -> zidane::context::Result<()> {
        Ok(())
    }
    async fn exec(
        &self,
        _: ExecutionHandle,
        _: &str,
        _: ExecOptions,
    ) -> zidane::context::Result<ExecOutput> {
        Err(ContextError::unsupported("exec"))
    }
    async fn read_file(
        &self,
        _: ExecutionHandle,
        _: &Path,
        _: ReadRange,
    ) -> zidane::context::Result<ReadResult> {
        Err(ContextError::unsupported("read_file"))
    }
    async fn follow_output(
        &self,
        _: ExecutionHandle,
        _: TaskId,
        offset: u64,
        max: usize,
    ) -> zidane::context::Result<Option<OutputChunk>> {
        let mut log = self.log.subscribe();
        let (len, ended) = *log
            .wait_for(|&(len, ended)| offset == u64::MAX || len > offset || ended)
            .await
            .unwrap();
        let from = offset.min(len);
        let bytes = usize::try_from(len - from).unwrap().min(max);
        Ok(Some(OutputChunk {
            offset: from,
            bytes: vec![b'.'; bytes],
            ended,
        }))
    }
    async fn read_screen(
        &self,
        _: ExecutionHandle,
        _: TaskId,
    ) -> zidane::context::Result<Option<Screen>> {
        Ok(Some(self.screen.lock().unwrap().clone()))
    }
    async fn write_input(
        &self,
        _: ExecutionHandle,
        task_id: TaskId,
        input: TaskInput,
    ) -> zidane::context::Result<Option<()>> {
        if *self.busy.lock().unwrap() {
            return Err(ContextError::Task {
                task_id,
                reason: "is not reading its input".into(),
            });
        }
        let TaskInput::Bytes(bytes) = input else {
            panic!("only bytes are typed");
        };
        self.asked
            .lock()
            .unwrap()
            .push(String::from_utf8(bytes).unwrap());
        Ok(Some(()))
    }
    async fn resize(
        &self,
        _: ExecutionHandle,
        _: TaskId,
        size: TtySize,
    ) -> zidane::context::Result<Option<()>> {
        self.asked.lock().unwrap().push(format!("resize {size}"));
        Ok(Some(()))
    }
}

async fn next(inbox: &mut mpsc::UnboundedReceiver<AppEvent>) -> AppEvent {
    tokio::time::timeout(STEP, inbox.recv())
        .await
        .expect("the watch said nothing")
        .unwrap()
}

#[tokio::test]
async fn the_screen_is_read_when_the_task_writes_keys_go_in_order_and_the_end_is_said() {
    let terminal = Terminal::new();
    let agent = zidane::agent::Agent::builder(Arc::new(ScriptedModel::new()), terminal.clone())
        .build()
        .unwrap();
    agent.handle().await.unwrap();
    let (events, mut inbox) = mpsc::unbounded_channel();
    let watch = AttachWatch::spawn(&agent, "bash_1", TtySize::new(20, 70), &events);
    let shown = |event: AppEvent| match event {
        AppEvent::Screen { task_id, screen } => {
            assert_eq!(task_id, "bash_1");
            screen.text()
        }
        other => panic!("not a screen: {other:?}"),
    };
    assert_eq!(shown(next(&mut inbox).await), "$");

    // Output wakes the reader.
    terminal.draw("$ l", false);
    assert_eq!(shown(next(&mut inbox).await), "$ l");

    for key in ["l", "s", "\r"] {
        watch.input(key.as_bytes().to_vec());
    }
    tokio::time::timeout(STEP, async {
        while terminal.asked.lock().unwrap().concat().len() < "resize 20x70ls\r".len() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    let asked = terminal.asked.lock().unwrap().clone();
    assert_eq!(asked.first().map(String::as_str), Some("resize 20x70"));
    assert_eq!(asked[1..].concat(), "ls\r", "in the order typed");

    // A task that does not read its input is said so, and stays attached.
    *terminal.busy.lock().unwrap() = true;
    watch.input(b"x".to_vec());
    let AppEvent::Note(note) = next(&mut inbox).await else {
        panic!("a busy task is a note");
    };
    assert_eq!(
        note,
        "bash_1 did not take what was typed (is not reading its input)"
    );

    // The end: its last screen, then why it is gone.
    terminal.draw("bye", true);
    assert_eq!(shown(next(&mut inbox).await), "bye");
    assert_eq!(
        next(&mut inbox).await,
        AppEvent::Gone {
            task_id: "bash_1".into(),
            reason: "ended".into()
        }
    );
}
