//! A worker with identity keys serves Restate's signed calls and refuses everyone
//! else's; a worker without keys listens only on loopback unless told plainly.
//!
//! The Restate server signs with an ed25519 key generated here; the worker is given its
//! public key. The attacker's requests are real `start` invocations (the service
//! protocol's messages, built by hand) posted straight to the worker's port, and the same
//! request signed with the server's key is shown to run, so a refusal is the identity
//! check and not a malformed request.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ed25519_dalek::{Signer, SigningKey};
use zidane_context::{BackgroundOptions, CancellationToken, ExecutionContext};
use zidane_restate::testing::RestateServer;
use zidane_test_support::{first_line, poll_until, sweep_lock};

use crate::support::{Cluster, WAIT, server_installed, tid};

/// The variable the worker reads identity keys from.
const KEYS_ENV: &str = "ZIDANE_WORKER_IDENTITY_KEYS";

/// A fresh ed25519 key from the OS's random source.
fn generate_key() -> SigningKey {
    let mut seed = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut seed)
        .unwrap();
    SigningKey::from_bytes(&seed)
}

/// The key's public half as Restate names it: `publickeyv1_` and the base58 of its 32
/// bytes.
fn public_key(key: &SigningKey) -> String {
    let raw = key.verifying_key().to_bytes();
    format!("publickeyv1_{}", bs58::encode(raw).into_string())
}

/// The key as a PKCS#8 PEM, what `openssl genpkey -algorithm ed25519` writes and
/// restate-server reads: the fixed DER prefix of an Ed25519 private key (RFC 8410), then
/// the 32-byte seed.
fn private_pem(key: &SigningKey) -> String {
    let mut der = vec![
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    der.extend_from_slice(&key.to_bytes());
    format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        STANDARD.encode(der)
    )
}

fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A request-identity JWT for `audience` (the request's path) signed by `key`, shaped as
/// restate-server makes them.
fn jwt(key: &SigningKey, audience: &str) -> String {
    let header = serde_json::json!({ "typ": "JWT", "alg": "EdDSA", "kid": public_key(key) });
    let now = unix_seconds();
    let claims =
        serde_json::json!({ "aud": audience, "iat": now, "nbf": now - 60, "exp": now + 60 });
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = key.sign(input.as_bytes());
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
}

/// A protobuf field: its tag and wire type, then the value.
fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(u8::try_from(value & 0x7f).unwrap() | 0x80);
        value >>= 7;
    }
    out.push(u8::try_from(value).unwrap());
}

fn bytes_field(out: &mut Vec<u8>, tag: u64, bytes: &[u8]) {
    varint(out, tag << 3 | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn varint_field(out: &mut Vec<u8>, tag: u64, value: u64) {
    varint(out, tag << 3);
    varint(out, value);
}

/// A service-protocol message: its type and length in an 8-byte header, then the body.
fn frame(out: &mut Vec<u8>, ty: u64, body: &[u8]) {
    let header = ty << 48 | body.len() as u64;
    out.extend_from_slice(&header.to_be_bytes());
    out.extend_from_slice(body);
}

/// The body of a `start` invocation of handle `key` running `command`, as Restate would
/// send it: a `StartMessage` (object key, no state) and the `InputCommandMessage` with
/// the request.
fn start_invocation(key: u64, command: &str) -> Vec<u8> {
    let deadline_ms = i64::try_from(unix_seconds() * 1000).unwrap() + 60_000;
    let request = serde_json::json!({
        "task_id": "bash_1",
        "command": command,
        "cwd": null,
        "env": {},
        "deadline_ms": deadline_ms,
    });
    let mut start = Vec::new();
    bytes_field(&mut start, 1, format!("forged-{key}").as_bytes()); // id
    bytes_field(&mut start, 2, format!("inv_forged_{key}").as_bytes()); // debug_id
    varint_field(&mut start, 3, 1); // known_entries: the input
    bytes_field(&mut start, 6, key.to_string().as_bytes()); // key
    let mut value = Vec::new();
    bytes_field(&mut value, 1, request.to_string().as_bytes()); // Value.content
    let mut input = Vec::new();
    bytes_field(&mut input, 14, &value); // InputCommandMessage.value
    let mut body = Vec::new();
    frame(&mut body, 0x0000, &start);
    frame(&mut body, 0x0400, &input);
    body
}

/// Posts a `start` of `command` on handle `key` straight to the worker at `address`, with
/// `headers`; returns the status (the body read to its end, so whatever the worker does
/// with the request is done).
async fn post_start(
    address: std::net::SocketAddr,
    service: &str,
    key: u64,
    command: &str,
    headers: &[(&str, String)],
) -> u16 {
    let client = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let mut request = client
        .post(format!("http://{address}/invoke/{service}/start"))
        .header("content-type", "application/vnd.restate.invocation.v5")
        .body(start_invocation(key, command))
        .timeout(WAIT);
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let _ = response.bytes().await;
    status
}

fn signed(key: &SigningKey, path: &str) -> Vec<(&'static str, String)> {
    vec![
        ("x-restate-signature-scheme", "v1".to_owned()),
        ("x-restate-jwt-v1", jwt(key, path)),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_requests_signed_by_the_restate_server_run() {
    if !server_installed() {
        return;
    }
    let keys = tempfile::tempdir().unwrap();
    let server_key = generate_key();
    let pem = keys.path().join("restate.pem");
    std::fs::write(&pem, private_pem(&server_key)).unwrap();
    // The server's key in a file, after another trusted key: a rotation in progress.
    let key_file = keys.path().join("worker-keys");
    std::fs::write(
        &key_file,
        format!("# the Restate server's key\n{}\n", public_key(&server_key)),
    )
    .unwrap();
    let retired = public_key(&generate_key());
    let cluster = Cluster {
        server: RestateServer::start_signing(&pem).await.unwrap(),
        dir: crate::support::worker_scratch(),
        workers: Vec::new(),
    };
    // Registration is Restate calling the worker's discovery: signed too.
    let worker = cluster.spawn_worker_with("w1", "127.0.0.1:0".parse().unwrap(), |command| {
        command
            .args(["--identity-key", &retired])
            .arg("--identity-key-file")
            .arg(&key_file);
    });
    assert!(
        worker.ready_line.ends_with("identity: verified (2 keys)"),
        "{}",
        worker.ready_line
    );
    let mut cluster = cluster;
    cluster.workers.push(worker);

    // Through Restate: signed, run (in the session's directory on the worker, where its
    // sandbox lets it write).
    let context = cluster.context();
    let handle = context.create_handle().await.unwrap();
    let marker = cluster.workers[0]
        .user_dir
        .join("handles")
        .join(handle.id().to_string())
        .join("through-restate");
    let started = context
        .exec_background(
            handle,
            "touch through-restate",
            BackgroundOptions::new("/unused"),
        )
        .await
        .unwrap();
    assert_eq!(started.task_id, tid(1));
    let exit = context
        .wait_background(handle, started.task_id, WAIT, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(exit.map(|e| e.exit_code), Some(0));
    assert!(marker.exists());

    // Straight to the worker's port, as anyone on the network could.
    let worker = &cluster.workers[0];
    let service = "ZidaneWorker_w1";
    let path = format!("/invoke/{service}/start");
    // Each command writes in its own session's directory on the worker (where its
    // sandbox lets it).
    let session_dir = |key: u64| worker.user_dir.join("handles").join(key.to_string());
    let command = "touch forged";
    let attacker = generate_key();
    let attempts: [(&str, Vec<(&str, String)>); 4] = [
        ("no signature", Vec::new()),
        (
            "declared unsigned",
            vec![("x-restate-signature-scheme", "unsigned".to_owned())],
        ),
        ("signed by another key", signed(&attacker, &path)),
        (
            "the server's signature of another path",
            signed(&server_key, &format!("/invoke/{service}/list")),
        ),
    ];
    for (n, (what, headers)) in (1u64..).zip(attempts) {
        let status = post_start(worker.address, service, 1000 + n, command, &headers).await;
        assert_eq!(status, 401, "{what}: answered {status}");
    }
    // The same request, signed as the server signs it, runs: so what was refused above
    // would have run without the check.
    let control = session_dir(2000).join("control");
    let status = post_start(
        worker.address,
        service,
        2000,
        "touch control",
        &signed(&server_key, &path),
    )
    .await;
    assert_eq!(status, 200);
    poll_until(
        WAIT,
        Duration::from_millis(20),
        "the signed request ran",
        || control.exists(),
    )
    .await;
    for n in 1..=4 {
        assert!(
            !session_dir(1000 + n).join("forged").exists(),
            "an unsigned request ran its command"
        );
    }
}

/// Runs `zidane-worker` with `args` (and `env`), expecting it to refuse to start;
/// returns what it said.
fn refused(user_dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut child = worker_command(user_dir, args, env)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_bounded(&mut child);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!status.success(), "started with {args:?}: {stderr}");
    assert!(
        !user_dir.exists(),
        "a refused worker made its user dir: {stderr}"
    );
    stderr
}

fn worker_command(user_dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_zidane-worker"));
    command
        .args(["--worker-id", "w1", "--ingress", "http://127.0.0.1:9"])
        .arg("--user-dir")
        .arg(user_dir)
        .args(args)
        .env_remove(KEYS_ENV)
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    command
}

fn wait_bounded(child: &mut Child) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("zidane-worker did not exit within {WAIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts `zidane-worker` with `args` (no `--admin`: it is ready at once) and returns
/// its ready line; the worker is stopped.
fn ready_line(user_dir: &Path, args: &[&str]) -> String {
    // A starting worker sweeps orphans (see `support::Cluster::spawn_worker`).
    let _lock = sweep_lock();
    let mut child = worker_command(user_dir, args, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let line = first_line(&mut child, WAIT);
    let _ = child.kill();
    let _ = child.wait();
    line.expect("the worker is ready in time")
        .trim_end()
        .to_owned()
}

#[test]
fn a_worker_without_keys_listens_only_on_loopback_unless_told_plainly() {
    let dir = crate::support::worker_scratch();
    let user_dir = dir.path().join("worker");
    let key = public_key(&generate_key());

    let said = refused(&user_dir, &["--listen", "0.0.0.0:0"], &[]);
    assert!(said.contains("refusing to listen on 0.0.0.0:0"), "{said}");
    assert!(said.contains("--insecure-no-identity"), "{said}");
    assert!(said.contains("--identity-key"), "{said}");
    let said = refused(
        &user_dir,
        &["--listen", "0.0.0.0:0", "--insecure-no-identity"],
        &[("ZIDANE_WORKER_IDENTITY_KEYS", &key)],
    );
    assert!(
        said.contains("--insecure-no-identity contradicts"),
        "{said}"
    );

    let line = ready_line(&user_dir, &["--listen", "127.0.0.1:0"]);
    assert!(
        line.ends_with("identity: none (loopback only: any local process can call this worker)"),
        "{line}"
    );
    let line = ready_line(
        &user_dir,
        &["--listen", "0.0.0.0:0", "--insecure-no-identity"],
    );
    assert!(line.starts_with("ready 0.0.0.0:"), "{line}");
    assert!(
        line.contains("identity: NONE (--insecure-no-identity"),
        "{line}"
    );
    let line = ready_line(
        &user_dir,
        &["--listen", "0.0.0.0:0", "--identity-key", &key],
    );
    assert!(line.ends_with("identity: verified (1 key)"), "{line}");
}

#[test]
fn a_bad_identity_key_is_refused_naming_where_it_came_from() {
    let dir = crate::support::worker_scratch();
    let user_dir = dir.path().join("worker");
    let loopback = ["--listen", "127.0.0.1:0"];

    let said = refused(
        &user_dir,
        &[&loopback[..], &["--identity-key", "publickeyv1_abc"]].concat(),
        &[],
    );
    assert!(said.contains("zidane-worker: --identity-key: "), "{said}");

    let said = refused(&user_dir, &loopback, &[(KEYS_ENV, "not-a-key")]);
    assert!(
        said.contains(&format!("zidane-worker: {KEYS_ENV}: ")),
        "{said}"
    );

    let file = dir.path().join("keys");
    let good = public_key(&generate_key());
    std::fs::write(&file, format!("{good}\nsomething else\n")).unwrap();
    let file_arg = file.to_str().unwrap();
    let said = refused(
        &user_dir,
        &[&loopback[..], &["--identity-key-file", file_arg]].concat(),
        &[],
    );
    assert!(
        said.contains(&format!("--identity-key-file {file_arg} line 2: ")),
        "{said}"
    );

    // A file with no key in it is a mistake, not "no keys".
    std::fs::write(&file, "# nothing yet\n").unwrap();
    let said = refused(
        &user_dir,
        &[&loopback[..], &["--identity-key-file", file_arg]].concat(),
        &[],
    );
    assert!(said.contains("no key in it"), "{said}");

    // The private key where the public one belongs: refused, and not repeated.
    let key = generate_key();
    let pem = private_pem(&key);
    std::fs::write(&file, &pem).unwrap();
    let said = refused(
        &user_dir,
        &[&loopback[..], &["--identity-key-file", file_arg]].concat(),
        &[],
    );
    assert!(said.contains("this is a private key"), "{said}");
    let secret_line = pem.lines().nth(1).unwrap();
    assert!(!said.contains(secret_line), "{said}");
}
