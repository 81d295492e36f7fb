//! Whose is a listening socket on this machine: one a sandboxed command
//! of this Lathe started (a dev server in the background, say), or
//! another program's (a database, the person's own servers, an SSH
//! tunnel). Commands reach the first kind on the loopback interface;
//! the second only when the person named it.
//!
//! The kernel's tables (`/proc/net/tcp`, `tcp6`, `unix`) give each
//! listening socket's inode; the processes under Lathe's wardens are
//! found by their parents, and their descriptors show which sockets they
//! hold.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A listening TCP socket, as the kernel's table gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listening {
    pub ip: IpAddr,
    pub port: u16,
    pub inode: u64,
}

/// `TCP_LISTEN` in the tables' `st` column.
const LISTEN: &str = "0A";

/// The listening sockets of a `/proc/net/tcp` or `tcp6` table. Lines
/// that do not read as the kernel writes them are passed over.
pub fn parse_tcp_table(table: &str) -> Vec<Listening> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // sl local rem st queues timer retransmits uid timeout inode
            let (local, state, inode) = (fields.get(1)?, fields.get(3)?, fields.get(9)?);
            if *state != LISTEN {
                return None;
            }
            let (ip, port) = local.split_once(':')?;
            Some(Listening {
                ip: table_ip(ip)?,
                port: u16::from_str_radix(port, 16).ok()?,
                inode: inode.parse().ok()?,
            })
        })
        .collect()
}

/// An address as the tables write it: 32-bit words in hex, each in the
/// machine's byte order.
fn table_ip(hex: &str) -> Option<IpAddr> {
    let word = |i: usize| -> Option<[u8; 4]> {
        let w = u32::from_str_radix(hex.get(i * 8..i * 8 + 8)?, 16).ok()?;
        Some(w.to_ne_bytes())
    };
    match hex.len() {
        8 => Some(IpAddr::V4(Ipv4Addr::from(word(0)?))),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            Some(IpAddr::V6(Ipv6Addr::from(bytes)))
        }
        _ => None,
    }
}

/// The inodes of the listening Unix sockets bound to the abstract name
/// `name` in a `/proc/net/unix` table (which shows the name's NUL bytes
/// as `@`).
pub fn parse_abstract_listeners(table: &str, name: &[u8]) -> Vec<u64> {
    let shown: Vec<u8> = name
        .iter()
        .map(|b| if *b == 0 { b'@' } else { *b })
        .collect();
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let mut rest = line;
            let mut fields = Vec::new();
            for _ in 0..7 {
                rest = rest.trim_start_matches(' ');
                let end = rest.find(' ').unwrap_or(rest.len());
                fields.push(&rest[..end]);
                rest = &rest[end..];
            }
            // Flags: __SO_ACCEPTCON (listening); the path after one space.
            let listening = u32::from_str_radix(fields.get(3)?, 16).ok()? & 0x0001_0000 != 0;
            let path = rest.strip_prefix(" @")?;
            if !listening || path.as_bytes() != shown.as_slice() {
                return None;
            }
            fields.get(6)?.parse().ok()
        })
        .collect()
}

/// Whether `ip` is on the loopback interface (in either family).
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or(v6.is_loopback(), |v4| v4.is_loopback()),
    }
}

/// Whether a connection to `ip` is one to this machine: the loopback
/// interface, or the unspecified address (which the kernel takes for
/// this machine), in either family.
pub fn is_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_unspecified(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.is_loopback() || v4.is_unspecified(),
            None => v6.is_loopback() || v6.is_unspecified(),
        },
    }
}

/// The listening TCP sockets a connection to this machine's `port` may
/// reach: on that port, bound to the loopback interface or to every
/// interface, in either table (a socket of the one family can take
/// connections of the other).
pub fn tcp_listeners(port: u16) -> Vec<u64> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|t| std::fs::read_to_string(t).ok())
        .flat_map(|t| parse_tcp_table(&t))
        .filter(|l| l.port == port && is_local(l.ip))
        .map(|l| l.inode)
        .collect()
}

/// The listening sockets bound to an abstract name.
pub fn abstract_listeners(name: &[u8]) -> Vec<u64> {
    std::fs::read_to_string("/proc/net/unix")
        .map(|t| parse_abstract_listeners(&t, name))
        .unwrap_or_default()
}

/// The listening sockets the wardens of one Lathe bound for their
/// commands, kept as empty files named by the socket's inode in a
/// directory of Lathe's own (0700, where no command can write): the
/// warden of one command learns what another's serves. Opened before the
/// warden leaves the system's mount table, and used through that
/// descriptor.
pub struct Registry {
    dir: std::os::fd::OwnedFd,
}

impl Registry {
    pub fn open(dir: &std::path::Path) -> Option<Self> {
        use rustix::fs::{Mode, OFlags};
        rustix::fs::open(
            dir,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::empty(),
        )
        .ok()
        .map(|dir| Self { dir })
    }

    /// Notes a socket a command of this Lathe listens on, and its port
    /// (inode numbers come round again; a port another program holds
    /// is never one a command binds).
    pub fn record(&self, inode: u64, port: u16) {
        use rustix::fs::{Mode, OFlags};
        let _ = rustix::fs::openat(
            &self.dir,
            format!("{inode}-{port}"),
            OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::RUSR | Mode::WUSR,
        );
    }

    /// Whether a command of this Lathe listens on the socket, on `port`.
    pub fn knows(&self, inode: u64, port: u16) -> bool {
        rustix::fs::statat(
            &self.dir,
            format!("{inode}-{port}"),
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        )
        .is_ok()
    }
}

/// The sockets of `inodes` that processes under `root` (this warden:
/// its command and what it started) hold.
pub fn held_under(inodes: &[u64], root: u32) -> HashSet<u64> {
    let wanted: HashSet<u64> = inodes.iter().copied().collect();
    let mut found = HashSet::new();
    if wanted.is_empty() {
        return found;
    }
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(ppid) = parent_of(pid) {
                children.entry(ppid).or_default().push(pid);
            }
        }
    }
    let mut queue = vec![root];
    let mut seen = HashSet::new();
    while let Some(pid) = queue.pop() {
        if !seen.insert(pid) {
            continue;
        }
        found.extend(
            socket_inodes(pid)
                .into_iter()
                .filter(|i| wanted.contains(i)),
        );
        if found.len() == wanted.len() {
            break;
        }
        queue.extend(children.get(&pid).into_iter().flatten().copied());
    }
    found
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`: the name may hold spaces and parentheses.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// The inodes of the sockets a process holds.
fn socket_inodes(pid: u32) -> Vec<u64> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|link| {
            link.to_str()?
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_tcp_tables_give_their_listening_sockets() {
        let v4 = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
           0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0\n\
           1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 77 1 0000000000000000 100 0 0 10 0\n\
           2: 0100007F:A1B2 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 99 1 0000000000000000 20 4 30 10 -1\n";
        assert_eq!(
            parse_tcp_table(v4),
            vec![
                Listening {
                    ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
                    port: 8080,
                    inode: 4242
                },
                Listening {
                    ip: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
                    port: 22,
                    inode: 77
                },
            ]
        );
        let v6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
           0: 00000000000000000000000001000000:1F40 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 555 1 0000000000000000 100 0 0 10 0\n";
        assert_eq!(
            parse_tcp_table(v6),
            vec![Listening {
                ip: IpAddr::V6(Ipv6Addr::LOCALHOST),
                port: 8000,
                inode: 555
            }]
        );
    }

    #[test]
    fn abstract_listeners_are_found_by_name() {
        let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 12346 @/tmp/.X11-unix/X0\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 12347 @/tmp/.X11-unix/X0\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 12348 @my@name\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 12349 /run/x.sock\n";
        assert_eq!(
            parse_abstract_listeners(table, b"/tmp/.X11-unix/X0"),
            vec![12346]
        );
        assert_eq!(parse_abstract_listeners(table, b"my\0name"), vec![12348]);
        assert!(parse_abstract_listeners(table, b"other").is_empty());
    }

    #[test]
    fn this_machine_is_the_loopback_and_the_unspecified_address() {
        for local in [
            "127.0.0.1",
            "127.3.2.1",
            "0.0.0.0",
            "::1",
            "::",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_local(local.parse().unwrap()), "{local}");
        }
        for far in [
            "10.0.0.1",
            "192.168.1.5",
            "8.8.8.8",
            "::ffff:10.0.0.1",
            "2001:db8::1",
        ] {
            assert!(!is_local(far.parse().unwrap()), "{far}");
        }
    }

    #[test]
    fn a_socket_is_found_under_its_holder_and_in_the_registry_once_noted() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let inodes = tcp_listeners(port);
        assert_eq!(inodes.len(), 1, "{inodes:?}");
        let me = std::process::id();
        assert_eq!(held_under(&inodes, me), inodes.iter().copied().collect());
        // Under a process that does not hold it (its parent's tree
        // holds it, not its own): not found.
        let child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        assert!(held_under(&inodes, child.id()).is_empty());
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::open(dir.path()).unwrap();
        assert!(!registry.knows(inodes[0], port));
        registry.record(inodes[0], port);
        assert!(registry.knows(inodes[0], port));
        // The same inode number on another port is another socket.
        assert!(!registry.knows(inodes[0], port.wrapping_add(1)));
        assert!(Registry::open(&dir.path().join("missing")).is_none());
        let mut child = child;
        let _ = child.kill();
        let _ = child.wait();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Whatever the tables hold, reading them never panics, and what
        /// is read was on a line as written.
        #[test]
        fn any_table_reads_without_panic(table in ".{0,2000}", name in proptest::collection::vec(any::<u8>(), 0..40)) {
            let lower = table.to_ascii_lowercase();
            for l in parse_tcp_table(&table) {
                let hex = format!("{:x}", l.port);
                let found = lower.contains(&hex);
                prop_assert!(found);
            }
            for inode in parse_abstract_listeners(&table, &name) {
                prop_assert!(table.contains(&inode.to_string()));
            }
        }

        #[test]
        fn any_well_formed_row_reads_back(ip in any::<u32>(), port in any::<u16>(), inode in any::<u64>(), listen in any::<bool>()) {
            let state = if listen { "0A" } else { "01" };
            let table = format!(
                "header\n   0: {ip:08X}:{port:04X} 00000000:0000 {state} 00000000:00000000 00:00000000 00000000  1000        0 {inode} 1\n"
            );
            let got = parse_tcp_table(&table);
            if listen {
                prop_assert_eq!(got, vec![Listening { ip: IpAddr::V4(Ipv4Addr::from(ip.to_ne_bytes())), port, inode }]);
            } else {
                prop_assert!(got.is_empty());
            }
        }
    }
}
