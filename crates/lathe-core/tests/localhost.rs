//! A dev server in the default sandbox (the network off): it listens on
//! the loopback interface, where the person's browser and other commands
//! of the session reach it; never on another interface; and commands
//! reach nothing else, on this machine or off it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lathe_core::policy::Workspace;
use lathe_core::tools::builtin::ExecShell;
use lathe_core::tools::{Tool, ToolContext};
use serde_json::{Value, json};

use crate::harness::builtin_settings;

async fn run(ws: &Path, command: &str, timeout: u64) -> Value {
    run_with(&ExecShell::new(&builtin_settings()), ws, command, timeout).await
}

async fn run_with(tool: &ExecShell, ws: &Path, command: &str, timeout: u64) -> Value {
    let ctx = ToolContext::standalone(Arc::new(Workspace::new(ws).unwrap()));
    tool.execute(json!({ "command": command, "timeout": timeout }), &ctx)
        .await
        .unwrap_or_else(|e| panic!("{command}: {e}"))
}

fn out(v: &Value) -> String {
    format!(
        "{}{}",
        v["stdout"].as_str().unwrap_or(""),
        v["stderr"].as_str().unwrap_or("")
    )
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The kernel's listening sockets on `port`, as `address:port` in the
/// tables' hex (`0100007F:1F40`, `00000000:1F40`).
fn listening_on(port: u16) -> Vec<String> {
    let suffix = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|t| std::fs::read_to_string(t).ok())
        .flat_map(|t| {
            t.lines()
                .filter_map(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    (f.get(3) == Some(&"0A") && f.get(1).is_some_and(|a| a.ends_with(&suffix)))
                        .then(|| f[1].to_string())
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// GET / from outside the sandbox, as the person's browser would, until
/// it answers.
fn fetch(host: &str, port: u16) -> Option<String> {
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if let Ok(mut s) = TcpStream::connect((host, port)) {
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let _ = write!(s, "GET / HTTP/1.0\r\nHost: localhost\r\n\r\n");
            let mut body = String::new();
            let _ = s.read_to_string(&mut body);
            if body.starts_with("HTTP/") {
                return Some(body);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

/// `python3 -m http.server` bound to every interface, as people start
/// it: it serves on 127.0.0.1 only, the person's side reaches it, and
/// the command is told where it listens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dev_server_bound_to_every_interface_serves_localhost_only() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("index.html"), "hello from the sandbox\n").unwrap();
    let port = free_port();
    let dir = ws.path().to_path_buf();
    let server = tokio::spawn(async move {
        run(
            &dir,
            &format!("timeout 6 python3 -m http.server {port} --bind 0.0.0.0; true"),
            20,
        )
        .await
    });
    let body = tokio::task::spawn_blocking(move || fetch("127.0.0.1", port))
        .await
        .unwrap();
    let tables = listening_on(port);
    let v = server.await.unwrap();
    let body = body.unwrap_or_else(|| panic!("the server was not reached: {}", out(&v)));
    assert!(body.contains("hello from the sandbox"), "{body}");
    assert_eq!(tables, vec![format!("0100007F:{port:04X}")], "{}", out(&v));
    assert!(
        out(&v).contains(&format!(
            "listening on 127.0.0.1:{port} instead of 0.0.0.0:{port}"
        )),
        "{}",
        out(&v)
    );
}

/// The default of `http.server` (both families on `::`), a socket that
/// listens without a bind, and one bound to an address of another
/// interface: 127.0.0.1 (which every `localhost` reaches), the loopback
/// interface, and refused with a reason.
#[tokio::test]
async fn what_listens_is_put_on_the_loopback_interface() {
    let ws = tempfile::tempdir().unwrap();
    let v = run(
        ws.path(),
        "python3 -c '
import socket
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind((\"::\", 0)); s.listen(); print(\"DUAL\", s.getsockname()[0])
t = socket.socket(); t.listen(); print(\"AUTO\", t.getsockname()[0])
u = socket.socket(socket.AF_INET6); u.listen(); print(\"AUTO6\", u.getsockname()[0])
try:
    socket.socket().bind((\"192.0.2.7\", 0)); print(\"FAR-BOUND\")
except OSError as e:
    print(\"FAR\", e.errno)
'",
        20,
    )
    .await;
    let o = out(&v);
    assert!(o.contains("DUAL ::ffff:127.0.0.1"), "{o}");
    assert!(o.contains("AUTO 127.0.0.1"), "{o}");
    assert!(o.contains("AUTO6 ::1"), "{o}");
    // EADDRNOTAVAIL
    assert!(o.contains("FAR 99"), "{o}");
    assert!(o.contains("refused to listen on 192.0.2.7:0"), "{o}");
}

/// A server one command of the session started is reached by another
/// (a background server and the `curl` that tries it are two commands);
/// a program outside the sandbox listening on this machine is not, nor
/// any address off it, by `connect` or by a TCP Fast Open send, nor by
/// UDP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_reach_the_session_s_servers_and_nothing_else() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("index.html"), "served by the session\n").unwrap();
    let port = free_port();
    let dir = ws.path().to_path_buf();
    // One session: two commands of the same settings.
    let session = ExecShell::new(&builtin_settings());
    let first = session.clone();
    let server = tokio::spawn(async move {
        run_with(
            &first,
            &dir,
            &format!("timeout 8 python3 -m http.server {port} --bind 127.0.0.1; true"),
            20,
        )
        .await
    });
    assert!(
        tokio::task::spawn_blocking(move || fetch("127.0.0.1", port))
            .await
            .unwrap()
            .is_some(),
        "the server did not start"
    );
    // Another program's server on this machine: the person's database.
    let theirs = TcpListener::bind("127.0.0.1:0").unwrap();
    theirs.set_nonblocking(true).unwrap();
    let their_port = theirs.local_addr().unwrap().port();
    let v = run_with(
        &session,
        ws.path(),
        &format!(
            "python3 -c '
import socket, urllib.request
print(\"OURS\", urllib.request.urlopen(\"http://localhost:{port}/\").read().decode().strip())
for host in (\"127.0.0.1\", \"0.0.0.0\", \"::ffff:127.0.0.1\"):
    try:
        socket.create_connection((host, {their_port}), timeout=3); print(\"THEIRS-REACHED\", host)
    except OSError as e:
        print(\"THEIRS\", e.errno)
try:
    socket.create_connection((\"192.0.2.7\", 80), timeout=3); print(\"FAR-REACHED\")
except OSError as e:
    print(\"FAR\", e.errno)
try:
    s = socket.socket(); s.sendto(b\"x\", socket.MSG_FASTOPEN, (\"127.0.0.1\", {their_port})); print(\"TFO-SENT\")
except OSError as e:
    print(\"TFO\", e.errno)
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.sendto(b\"x\", (\"127.0.0.1\", 9)); print(\"UDP-SENT\")
except OSError as e:
    print(\"UDP\", e.errno)
'"
        ),
        20,
    )
    .await;
    let o = out(&v);
    // Another Lathe's command does not reach it.
    let stranger = run(
        ws.path(),
        &format!(
            "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port})); \
             print(\"STRANGER-REACHED\")' 2>&1"
        ),
        20,
    )
    .await;
    let _ = server.await;
    assert!(
        out(&stranger).contains("a program outside the sandbox listens there")
            && !out(&stranger).contains("STRANGER-REACHED"),
        "{}",
        out(&stranger)
    );
    assert!(o.contains("OURS served by the session"), "{o}");
    assert!(!o.contains("REACHED") && !o.contains("SENT"), "{o}");
    // EACCES, ENETUNREACH, EPERM, EACCES
    assert_eq!(o.matches("THEIRS 13").count(), 3, "{o}");
    assert!(o.contains("FAR 101"), "{o}");
    assert!(o.contains("TFO 1"), "{o}");
    assert!(o.contains("UDP 13"), "{o}");
    assert!(
        o.contains("a program outside the sandbox listens there"),
        "{o}"
    );
    assert!(theirs.accept().is_err(), "{o}");
    // Named by the person, it is reached.
    let mut settings = builtin_settings();
    settings.sandbox.allow_sockets = vec![format!("localhost:{their_port}")];
    let tool = ExecShell::new(&settings);
    let ctx = ToolContext::standalone(Arc::new(Workspace::new(ws.path()).unwrap()));
    let v = tool
        .execute(
            json!({"command": format!("python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {their_port})); print(\"NAMED\")'")}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(out(&v).contains("NAMED"), "{v}");
}

/// The fifth attack round on the network rules: a socket connected,
/// then dissolved (AF_UNSPEC), keeps a port on no address and would
/// listen on every interface (it listens on the loopback one); an IPv6 routing header would send a
/// connection's packets off the machine; SO_REUSEPORT would share the
/// person's own server's connections with a command; NETLINK_USERSOCK
/// carries messages to programs outside. Each is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listening_everywhere_rerouting_and_sharing_a_port_are_refused() {
    let ws = tempfile::tempdir().unwrap();
    // The person's own server, sharing its port with whoever may.
    let theirs = reuseport_listener();
    theirs.set_nonblocking(true).unwrap();
    let their_port = theirs.local_addr().unwrap().port();
    let v = run(
        ws.path(),
        &format!(
            "python3 -c '
import socket, struct, ctypes
libc = ctypes.CDLL(None, use_errno=True)
l = socket.socket(); l.bind((\"127.0.0.1\", 0)); l.listen(); port = l.getsockname()[1]
s = socket.socket(); s.connect((\"127.0.0.1\", port)); l.accept()
libc.connect(s.fileno(), struct.pack(\"H14s\", 0, b\"\"), 16)
try:
    s.listen(5); print(\"LISTENING-ON\", s.getsockname()[0])
except OSError as e:
    print(\"DISSOLVED\", e.errno)
six = socket.socket(socket.AF_INET6)
try:
    six.setsockopt(socket.IPPROTO_IPV6, 57, bytes([0, 2, 4, 0, 0, 0, 0, 0]) + socket.inet_pton(socket.AF_INET6, \"2001:db8::7\"))
    print(\"RTHDR-SET\")
except OSError as e:
    print(\"RTHDR\", e.errno)
r = socket.socket(); r.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
try:
    r.bind((\"127.0.0.1\", {their_port})); r.listen(); print(\"SHARED\")
except OSError as e:
    print(\"SHARE\", e.errno)
try:
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 2); print(\"USERSOCK-MADE\")
except OSError as e:
    print(\"USERSOCK\", e.errno)
socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0); print(\"ROUTE-OK\")
'"
        ),
        20,
    )
    .await;
    let o = out(&v);
    // Put on the loopback interface (or refused), never every interface;
    // then EPERM, EADDRINUSE, EPROTONOSUPPORT.
    assert!(
        o.contains("LISTENING-ON 127.0.0.1") || o.contains("DISSOLVED 13"),
        "{o}"
    );
    assert!(o.contains("RTHDR 1"), "{o}");
    assert!(o.contains("SHARE 98"), "{o}");
    assert!(o.contains("another program of this machine listens"), "{o}");
    assert!(o.contains("USERSOCK 93"), "{o}");
    assert!(o.contains("ROUTE-OK"), "{o}");
    assert!(theirs.accept().is_err());
}

/// A listener on 127.0.0.1 that lets others share its port, as some
/// servers do.
fn reuseport_listener() -> TcpListener {
    use rustix::net::{AddressFamily, SocketType, bind, listen, socket, sockopt};
    let fd = socket(AddressFamily::INET, SocketType::STREAM, None).unwrap();
    sockopt::set_socket_reuseport(&fd, true).unwrap();
    bind(
        &fd,
        &std::net::SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, 0),
    )
    .unwrap();
    listen(&fd, 8).unwrap();
    TcpListener::from(fd)
}
