import shlex
import subprocess
import sys

from mbarrier.cli import main


def test_demo_runs_and_shows_a_violation(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    # The checker part: the bundled ring verifies, its planted tx-count bug deadlocks, explained.
    assert "VERIFIED: every interleaving explored" in out
    assert "[1] deadlock: 3 threads wait forever (on empty, full)" in out
    assert "4 transaction bytes still outstanding" in out
    assert "replay: mbarrier run " in out and "..." not in out
    # The core tour comes last.
    assert out.index("VERIFIED") < out.index("== The mbarrier object")
    assert "word=0x7ffff800001ffffe" in out  # init(1): expected and pending 1, phase 0
    assert "caught PendingUnderflow [rule pending-underflow, PTX ISA 9.7.13.15.2]" in out


def test_console_script_without_command_is_usage_error():
    proc = subprocess.run([sys.executable, "-m", "mbarrier"], capture_output=True, text=True)
    assert proc.returncode == 2


def test_unknown_option_is_usage_error_without_traceback():
    proc = subprocess.run([sys.executable, "-m", "mbarrier", "demo", "--bogus"], capture_output=True,
                          text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


def test_the_commands_demo_prints_work_when_copied(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    commands = [line[2:] for line in out.splitlines() if line.startswith("$ mbarrier ")]
    commands += [line.split("replay: ", 1)[1] for line in out.splitlines() if "replay: mbarrier " in line]
    assert len(commands) == 3
    codes = []
    for command in commands:
        words = shlex.split(command)
        assert words[0] == "mbarrier"
        proc = subprocess.run([sys.executable, "-m", "mbarrier", *words[1:]], capture_output=True, text=True)
        assert proc.stderr == ""
        codes.append(proc.returncode)
    assert codes == [0, 1, 1]  # verified; the deadlock found; the deadlock replayed (stuck)
