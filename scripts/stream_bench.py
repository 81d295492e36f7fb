#!/usr/bin/env python3
"""How fast a streamed answer reaches the person, driving the real binary.

A local server speaks the OpenAI Responses wire and streams an answer of
N lines (prose, lists, headings and code blocks, in deltas of about four
characters, as a model's tokens come) as fast as the socket takes it, so
what is measured is the client's own work.

    scripts/stream_bench.py terminal [--lines 400 2000] [--runs 5]
        `lathe` in tmux at 120x40 (or --size 80x24): the time from the
        server's first byte to the answer's last line on the screen
        (tmux capture-pane, polled every 2 ms).

    scripts/stream_bench.py headless [--lines 2000] [--runs 5] [--codex PATH]
        `lathe exec` (and `codex exec`, if PATH to Codex's binary is
        given) on the same stream: wall time, CPU (user + system, from
        wait4, with the processes it waited for), peak resident memory,
        and the most anonymous memory seen (sampled every 2 ms: what the
        program allocated, without its binary's mapped pages); with
        Codex, the ratios. Each tool gets a fresh HOME and one run
        there first that is not counted (what a first start sets up).

    scripts/stream_bench.py acp [--lines 2000] [--runs 5]
        The same answer through `lathe acp` (an editor's client speaking
        ACP on stdin and stdout: initialize, session/new, one prompt)
        beside `lathe exec --json`: wall time and CPU of each, and the
        ratio (the issue's bound: ACP at most 1.2x the CPU).

    scripts/stream_bench.py dialog [--lines 20000] [--runs 3]
        `lathe --approval ask` in tmux asked to approve a new file of N
        lines: how long the process keeps using CPU after the dialog is on
        the screen (sampled from /proc every 10 ms).

The terminal runs start with a fresh HOME and an empty workspace under /tmp.
Medians are printed; the machine is shared (2 cores), so run it more than
once before drawing a conclusion.
"""
import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def answer(lines: int) -> str:
    """A Markdown answer of `lines` lines, ending in its marker."""
    out = []
    k = 0
    while len(out) < lines - 1:
        k += 1
        out.append(f"## Part {k}: the parser and its errors")
        out.append("")
        out.append(f"The parser reads the input once (section {k}); every error carries")
        out.append("the **line and column** where it was found, and `parse_args` now")
        out.append("rejects an empty input instead of returning a default value.")
        out.append("")
        out.append("- `Error::Empty` when nothing was given")
        out.append("- `Error::Unknown(name)` for a flag the program does not know")
        out.append("")
        out.append("```rust")
        out.append(f"fn parse_{k}(input: &str) -> Result<Args, Error> {{")
        out.append("    if input.is_empty() {")
        out.append("        return Err(Error::Empty);")
        out.append("    }")
        out.append("    Ok(Args::new(input))")
        out.append("}")
        out.append("```")
        out.append("")
    # The last line stands alone (a paragraph of its own) and is short, so
    # it shows whole at any width.
    out = out[: lines - 2] + ["", marker(lines)]
    return "\n".join(out)


def marker(lines: int) -> str:
    return f"EOA-{lines}"


def pieces(text: str, size: int = 4):
    return [text[i : i + size] for i in range(0, len(text), size)]


def event(data: dict) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def responses_stream(text: str) -> bytes:
    """The whole answer as one Responses SSE body."""
    mid = "msg_bench"
    out = [
        event({"type": "response.created", "response": {"id": "resp_bench", "status": "in_progress", "output": []}}),
        event({"type": "response.output_item.added", "output_index": 0,
               "item": {"type": "message", "id": mid, "role": "assistant", "status": "in_progress", "content": []}}),
        event({"type": "response.content_part.added", "item_id": mid, "output_index": 0, "content_index": 0,
               "part": {"type": "output_text", "text": "", "annotations": []}}),
    ]
    for seq, p in enumerate(pieces(text)):
        out.append(event({"type": "response.output_text.delta", "item_id": mid, "output_index": 0,
                          "content_index": 0, "delta": p, "sequence_number": seq + 3}))
    item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}
    out.append(event({"type": "response.output_text.done", "item_id": mid, "output_index": 0,
                      "content_index": 0, "text": text}))
    out.append(event({"type": "response.content_part.done", "item_id": mid, "output_index": 0,
                      "content_index": 0, "part": item["content"][0]}))
    out.append(event({"type": "response.output_item.done", "output_index": 0, "item": item}))
    out.append(event({"type": "response.completed", "response": {
        "id": "resp_bench", "status": "completed", "output": [item],
        "usage": {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": len(text) // 4, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 1200 + len(text) // 4}}}))
    return b"".join(out)


def call_stream(name: str, arguments: dict) -> bytes:
    """One function call as a Responses SSE body."""
    args = json.dumps(arguments)
    fid = "fc_bench"
    item = {"type": "function_call", "id": fid, "call_id": "call_bench", "name": name,
            "arguments": args, "status": "completed"}
    out = [event({"type": "response.created", "response": {"id": "resp_call", "status": "in_progress", "output": []}}),
           event({"type": "response.output_item.added", "output_index": 0, "item": dict(item, arguments="", status="in_progress")})]
    for p in pieces(args, 4096):
        out.append(event({"type": "response.function_call_arguments.delta", "item_id": fid, "output_index": 0, "delta": p}))
    out.append(event({"type": "response.function_call_arguments.done", "item_id": fid, "output_index": 0, "arguments": args}))
    out.append(event({"type": "response.output_item.done", "output_index": 0, "item": item}))
    out.append(event({"type": "response.completed", "response": {
        "id": "resp_call", "status": "completed", "output": [item],
        "usage": {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 100,
                  "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 1300}}}))
    return b"".join(out)


class Server:
    """Streams the next of `bodies` (the last again and again) to each POST
    to /v1/responses; notes when each began."""

    def __init__(self, *bodies: bytes):
        self.bodies = list(bodies)
        self.started = []
        # Requests before this one belong to earlier runs.
        self.first = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                data = json.dumps({"data": [{"id": "bench", "object": "model"}], "models": []}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                self.rfile.read(n)
                if not self.path.rstrip("/").endswith("/responses"):
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = server.bodies[min(len(server.started) - server.first, len(server.bodies) - 1)]
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                server.started.append(time.monotonic())
                try:
                    self.wfile.write(body)
                    self.wfile.flush()
                except OSError:
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self):
        return f"http://127.0.0.1:{self.port}/v1"

    def close(self):
        self.httpd.shutdown()


def lathe_binary(path):
    if path:
        return path
    built = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "lathe")
    if not os.path.exists(built):
        sys.exit(f"no release binary at {built}: run `cargo build --release` or pass --lathe")
    return built


def fresh_dirs():
    base = tempfile.mkdtemp(prefix="lathe-bench-")
    home = os.path.join(base, "home")
    work = os.path.join(base, "work")
    os.makedirs(home)
    os.makedirs(work)
    return base, home, work


def lathe_env(home, url):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config"),
                "XDG_DATA_HOME": os.path.join(home, ".local/share"),
                "XDG_STATE_HOME": os.path.join(home, ".local/state"),
                "OPENAI_API_KEY": "sk-bench-0123456789abcdef", "TERM": "xterm-256color"})
    return env


def run_measured(argv, env, cwd):
    """Runs argv to its end; wall seconds, CPU seconds, peak RSS in MiB.

    A child's peak RSS counts its parent's pages from before its exec
    (Linux keeps the high-water mark across exec), so a child of this
    Python process would start at about 14 MiB. The program is started by
    GNU time (about 2 MiB), which reports the peak of the program alone;
    the CPU is this process's wait4 (the program and time's own 1 ms).
    """
    rss_file = None
    if os.path.exists("/usr/bin/time"):
        fd, rss_file = tempfile.mkstemp(prefix="lathe-bench-rss-")
        os.close(fd)
        argv = ["/usr/bin/time", "-f", "%M", "-o", rss_file, *argv]
    else:
        print("note: no /usr/bin/time: peak RSS includes about 14 MiB of this script", file=sys.stderr)
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()))
    reader.start()
    errs = []
    err_reader = threading.Thread(target=lambda: errs.append(proc.stderr.read()))
    err_reader.start()
    # The program's anonymous memory (its heap, stacks and buffers, without
    # the pages of its binary and libraries), sampled every 2 ms.
    anon = 0
    while True:
        done, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if done:
            break
        anon = max(anon, anon_kib(proc.pid))
        time.sleep(0.002)
    err_reader.join()
    err = errs[0]
    reader.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        sys.exit(f"{argv[0]} failed ({proc.returncode}): {err.decode(errors='replace')[-2000:]}")
    rss = usage.ru_maxrss
    if rss_file:
        with open(rss_file) as f:
            rss = int(f.read().split()[-1])
        os.unlink(rss_file)
    return wall, usage.ru_utime + usage.ru_stime, rss / 1024, anon / 1024, out[0]


def anon_kib(pid):
    """RssAnon of the program `pid` runs (itself, or the one child of
    GNU time), in KiB; 0 once gone."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
        target = kids[0] if kids else pid
        with open(f"/proc/{target}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def headless(args):
    lathe = lathe_binary(args.lathe)
    for n in args.lines:
        text = answer(n)
        server = Server(responses_stream(text))
        rows = {}
        try:
            for name in ["lathe"] + (["codex"] if args.codex else []):
                base, home, work = fresh_dirs()
                try:
                    if name == "lathe":
                        argv = [lathe, "exec", "--base-url", server.url(), "--wire-api", "responses",
                                "--model", "bench", "Explain the parser."]
                        env = lathe_env(home, server.url())
                    else:
                        codex_home = os.path.join(home, ".codex")
                        os.makedirs(codex_home)
                        argv = [args.codex, "exec", "--skip-git-repo-check", "-m", "bench",
                                "-c", "model_provider=bench",
                                "-c", f'model_providers.bench={{name="bench", base_url="{server.url()}", '
                                      f'env_key="OPENAI_API_KEY", wire_api="responses"}}',
                                "Explain the parser."]
                        env = lathe_env(home, server.url())
                        env["CODEX_HOME"] = codex_home
                    runs = []
                    # The first run in a new HOME sets up what later ones
                    # reuse (each tool's own first-start work): not counted.
                    for i in range(args.runs + 1):
                        wall, cpu, rss, anon, out = run_measured(argv, env, work)
                        if marker(n) not in out.decode(errors="replace"):
                            sys.exit(f"{name} did not print the whole answer")
                        if i > 0:
                            runs.append((wall, cpu, rss, anon))
                finally:
                    shutil.rmtree(base, ignore_errors=True)
                med = tuple(statistics.median(r[i] for r in runs) for i in range(4))
                rows[name] = med
                print(f"headless {n:>5} lines  {name:<6} wall {med[0]*1000:7.1f} ms  "
                      f"cpu {med[1]*1000:7.1f} ms  peak rss {med[2]:6.1f} MiB  "
                      f"anon {med[3]:6.1f} MiB  (median of {len(runs)})")
            if "codex" in rows:
                lw, lc, lr, la = rows["lathe"]
                cw, cc, cr, ca = rows["codex"]
                print(f"headless {n:>5} lines  lathe/codex: cpu {lc/cc:.3f}x  peak rss {lr/cr:.3f}x  "
                      f"anon {la/ca:.3f}x  wall {lw/cw:.3f}x")
        finally:
            server.close()


def run_acp(argv, env, cwd, marker_text):
    """Runs `lathe acp` as an editor would: initialize, session/new, one
    prompt; then closes its input. Wall seconds and CPU seconds (wait4)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(msg):
        proc.stdin.write((json.dumps(msg) + "\n").encode())
        proc.stdin.flush()

    def until(rid):
        text = []
        for line in proc.stdout:
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                if "error" in msg:
                    sys.exit(f"lathe acp: {msg['error']}")
                return msg["result"], "".join(text)
            upd = msg.get("params", {}).get("update", {})
            if upd.get("sessionUpdate") == "agent_message_chunk":
                text.append(upd["content"].get("text", ""))
        sys.exit("lathe acp ended early")

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": 1, "clientCapabilities": {}}})
    until(0)
    send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}})
    session = until(1)[0]["sessionId"]
    send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
          "params": {"sessionId": session, "prompt": [{"type": "text", "text": "Explain the parser."}]}})
    result, text = until(2)
    if result.get("stopReason") != "end_turn" or marker_text not in text:
        sys.exit("lathe acp did not stream the whole answer")
    proc.stdin.close()
    proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("lathe acp failed")
    return time.monotonic() - t0, usage.ru_utime + usage.ru_stime


def acp(args):
    lathe = lathe_binary(args.lathe)
    for n in args.lines:
        server = Server(responses_stream(answer(n)))
        rows = {}
        try:
            for name in ["exec --json", "acp"]:
                base, home, work = fresh_dirs()
                env = lathe_env(home, server.url())
                common = ["--base-url", server.url(), "--wire-api", "responses", "--model", "bench"]
                runs = []
                try:
                    for i in range(args.runs + 1):
                        if name == "acp":
                            wall, cpu = run_acp([lathe, *common, "acp"], env, work, marker(n))
                        else:
                            argv = [lathe, "exec", "--json", *common, "Explain the parser."]
                            wall, cpu, _, _, out = run_measured(argv, env, work)
                            if marker(n) not in out.decode(errors="replace"):
                                sys.exit("lathe exec did not print the whole answer")
                        if i > 0:
                            runs.append((wall, cpu))
                finally:
                    shutil.rmtree(base, ignore_errors=True)
                med = tuple(statistics.median(r[i] for r in runs) for i in range(2))
                rows[name] = med
                print(f"acp      {n:>5} lines  {name:<12} wall {med[0]*1000:7.1f} ms  "
                      f"cpu {med[1]*1000:7.1f} ms  (median of {len(runs)})")
            (ew, ec), (aw, ac) = rows["exec --json"], rows["acp"]
            print(f"acp      {n:>5} lines  acp/exec --json: cpu {ac/ec:.3f}x  wall {aw/ew:.3f}x")
        finally:
            server.close()


def tmux(*argv, check=True):
    return subprocess.run(["tmux", "-L", "lathe-bench", *argv], check=check,
                          capture_output=True, text=True).stdout


@contextlib.contextmanager
def lathe_in_tmux(lathe, server, size, extra=""):
    """`lathe` in a new tmux session of `size`, with a fresh HOME and
    workspace, once it is up; the session and the directories go after.
    Requests from here on are this run's (`server.first`)."""
    base, home, work = fresh_dirs()
    try:
        start_in_tmux(lathe, base, home, work, server, size, extra)
        server.first = len(server.started)
        yield
    finally:
        tmux("kill-server", check=False)
        shutil.rmtree(base, ignore_errors=True)


def start_in_tmux(lathe, base, home, work, server, size, extra=""):
    """`lathe` in a new tmux session of `size`; returns once it is up."""
    env = lathe_env(home, server.url())
    script = os.path.join(base, "run.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n")
        for k in ["HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "OPENAI_API_KEY", "TERM"]:
            f.write(f"export {k}='{env[k]}'\n")
        f.write(f"cd '{work}'\nexec '{lathe}' --base-url {server.url()} --wire-api responses --model bench {extra}\n")
    os.chmod(script, 0o755)
    cols, rows_ = size.split("x")
    tmux("kill-server", check=False)
    tmux("new-session", "-d", "-x", cols, "-y", rows_, script)
    deadline = time.monotonic() + 20
    while "bench" not in tmux("capture-pane", "-p"):
        if time.monotonic() > deadline:
            sys.exit("lathe did not start:\n" + tmux("capture-pane", "-p"))
        time.sleep(0.05)
    time.sleep(0.5)


def send_prompt(text):
    tmux("send-keys", "-l", text)
    time.sleep(0.3)
    tmux("send-keys", "Enter")


def wait_for(marker, started, before, timeout=30):
    """Polls the screen until `marker` shows after request `before` began;
    the time it showed."""
    deadline = time.monotonic() + timeout
    while True:
        screen = tmux("capture-pane", "-p")
        now = time.monotonic()
        if marker in screen and len(started) > before:
            return now
        if now > deadline:
            sys.exit(f"{marker!r} never showed:\n" + screen)
        time.sleep(0.002)


def terminal(args):
    if not shutil.which("tmux"):
        sys.exit("terminal needs tmux")
    lathe = lathe_binary(args.lathe)
    for n in args.lines:
        text = answer(n)
        server = Server(responses_stream(text))
        times = []
        try:
            for _ in range(args.runs):
                with lathe_in_tmux(lathe, server, args.size):
                    before = server.first
                    send_prompt("Explain the parser.")
                    shown = wait_for(marker(n), server.started, before)
                    times.append(shown - server.started[before])
        finally:
            server.close()
        print(f"terminal {args.size} {n:>5} lines  on screen {statistics.median(times)*1000:7.1f} ms "
              f"after the first byte (median of {len(times)}; min {min(times)*1000:.1f}, max {max(times)*1000:.1f})")


def cpu_of(pid):
    """CPU seconds the process has used (user + system)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def dialog(args):
    """A 20,000-line new file asked for approval: from the dialog on the
    screen, how long the process keeps using CPU (highlighting, layout)."""
    if not shutil.which("tmux"):
        sys.exit("dialog needs tmux")
    lathe = lathe_binary(args.lathe)
    for n in args.lines:
        content = "".join(f"fn step_{i}(x: u64) -> u64 {{ x.wrapping_mul({i}) + {i % 7} }}\n" for i in range(n))
        server = Server(call_stream("write_file", {"path": os.environ.get("BENCH_PATH", "big.rs"), "content": content}),
                        responses_stream("Written."))
        settle = []
        try:
            for _ in range(args.runs):
                with lathe_in_tmux(lathe, server, args.size, "--approval ask"):
                    pid = int(tmux("display-message", "-p", "#{pane_pid}").strip())
                    before = server.first
                    send_prompt("Write the file.")
                    shown = wait_for("step_", server.started, before)
                    # CPU sampled every 10 ms; settled once 200 ms pass
                    # without a tick of CPU.
                    last_cpu, last_change = cpu_of(pid), time.monotonic()
                    while time.monotonic() - last_change < 0.2:
                        time.sleep(0.01)
                        c = cpu_of(pid)
                        if c != last_cpu:
                            last_cpu, last_change = c, time.monotonic()
                        if time.monotonic() - shown > 10:
                            sys.exit("the dialog never settled")
                    settle.append(max(0.0, last_change - shown))
                    tmux("send-keys", "Escape")
        finally:
            server.close()
        print(f"dialog   {args.size} {n:>5} lines  settles to 0 CPU {statistics.median(settle)*1000:7.1f} ms "
              f"after it shows (median of {len(settle)}; max {max(settle)*1000:.1f}; CPU read every 10 ms, "
              f"in ticks of {1000 // os.sysconf('SC_CLK_TCK')} ms)")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["terminal", "headless", "dialog", "acp"])
    p.add_argument("--lines", type=int, nargs="+")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--lathe", help="the lathe binary (default: target/release/lathe)")
    p.add_argument("--codex", help="Codex's native binary, to compare headless")
    p.add_argument("--size", default="120x40")
    args = p.parse_args()
    if args.mode == "terminal":
        args.lines = args.lines or [400, 2000]
        terminal(args)
    elif args.mode == "dialog":
        args.lines = args.lines or [20000]
        dialog(args)
    elif args.mode == "acp":
        args.lines = args.lines or [2000]
        acp(args)
    else:
        args.lines = args.lines or [2000]
        headless(args)


if __name__ == "__main__":
    main()
