#!/usr/bin/env python3
"""Writes link/startup-order.txt: the functions a start and a streamed
answer run, which the release link places together at the front of the
binary's code.

A program's code is read from its file a page (and, with the kernel's
fault-around, 64 KiB) at a time. Scattered over 17 MB of code, the 3 MB
that `lathe exec` runs touched 10 MB of it; placed together they touch
3.4 MB (the headless bench's peak RSS: 23 -> 16 MiB).

    scripts/startup_order.py [--lathe PATH]

runs the release binary under valgrind's callgrind twice (`lathe exec`
and the terminal UI in tmux, each answering the stream bench's 400-line
answer) and keeps, in the order first seen, the functions of the binary
that ran. Symbol names carry hashes of their crate's version and build
settings: run it again after updating dependencies or the toolchain
(names it no longer finds are skipped by the linker, so a stale list
costs memory, never a build). Needs valgrind and tmux.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import stream_bench as sb

OUT = os.path.join(sb.ROOT, "link", "startup-order.txt")


def ran(profile, binary):
    """The functions of `binary` in a callgrind profile, first seen first."""
    names, seen = [], set()
    ob = cob = None
    with open(profile, errors="replace") as f:
        for line in f:
            if line.startswith("ob="):
                ob = line[3:].strip()
            elif line.startswith("cob="):
                cob = line[4:].strip()
            elif line.startswith(("fn=", "cfn=")):
                owner = cob if line.startswith("cfn=") and cob else ob
                cob = None
                name = line.split("=", 1)[1].strip()
                if owner and os.path.realpath(owner) == binary and name not in seen:
                    seen.add(name)
                    names.append(name)
    return names


def callgrind(out):
    return ["valgrind", "--tool=callgrind", "--demangle=no", "--compress-strings=no",
            "--dump-instr=no", f"--callgrind-out-file={out}"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lathe", help="the lathe binary (default: target/release/lathe)")
    args = p.parse_args()
    for tool in ("valgrind", "tmux", "nm"):
        if not shutil.which(tool):
            sys.exit(f"needs {tool}")
    lathe = os.path.realpath(sb.lathe_binary(args.lathe))
    text = sb.answer(400)
    server = sb.Server(sb.responses_stream(text))
    scratch = tempfile.mkdtemp(prefix="lathe-order-")
    try:
        # Headless: one run to set up the HOME, one measured.
        base, home, work = sb.fresh_dirs()
        env = sb.lathe_env(home, server.url())
        argv = [lathe, "exec", "--base-url", server.url(), "--wire-api", "responses",
                "--model", "bench", "Explain the parser."]
        subprocess.run(argv, env=env, cwd=work, stdout=subprocess.DEVNULL, check=True)
        exec_profile = os.path.join(scratch, "exec.out")
        subprocess.run(callgrind(exec_profile) + argv, env=env, cwd=work,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        shutil.rmtree(base, ignore_errors=True)
        # The terminal UI, started through a wrapper that runs it under
        # callgrind; quit with Ctrl-C twice once the answer is on screen.
        tui_profile = os.path.join(scratch, "tui.out")
        wrapper = os.path.join(scratch, "lathe")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\nexec " + " ".join(callgrind(tui_profile)) + f" '{lathe}' \"$@\"\n")
        os.chmod(wrapper, 0o755)
        with sb.lathe_in_tmux(wrapper, server, "120x40"):
            before = server.first
            sb.send_prompt("Explain the parser.")
            sb.wait_for(sb.marker(400), server.started, before, timeout=120)
            time.sleep(1)
            for _ in range(2):
                sb.tmux("send-keys", "C-c")
                time.sleep(1)
            deadline = time.monotonic() + 60
            while not os.path.exists(tui_profile) and time.monotonic() < deadline:
                time.sleep(0.2)
        if not os.path.exists(tui_profile):
            sys.exit("the terminal UI did not quit: no profile")
        order = ran(exec_profile, lathe)
        known = set(order)
        order += [n for n in ran(tui_profile, lathe) if n not in known]
    finally:
        server.close()
        shutil.rmtree(scratch, ignore_errors=True)
    symbols = set(subprocess.run(["nm", "--defined-only", lathe], capture_output=True, text=True,
                                 check=True).stdout.split())
    order = [n for n in order if n in symbols]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(order) + "\n")
    print(f"{len(order)} functions written to {os.path.relpath(OUT, sb.ROOT)}")


if __name__ == "__main__":
    main()
