"""TBIT against the real Linux stack, in network namespaces the test creates (client — router —
server, docs/tbit.md "Real Linux"): the kernel's initcwnd 2 and 4, SACK on and off, the
initial RTO of a SYN and of data, and today's mechanisms (TLP with tcp_early_retrans on and off,
RACK with tcp_recovery on and off, the window after a loss under cubic, reno and bbr, ECN
negotiation with tcp_ecn 0, 1 and 2, pacing off and capped by the application, HyStart under
cubic and reno), each as TBIT infers it through raw frames.

Needs Linux, root, `ip` and `ethtool`; skips with the reason otherwise. Everything created is
deleted (checked); every wait is bounded. About 30 s.
"""

from __future__ import annotations

import subprocess

import pytest

from tcplab.tbit.linux import RESET
from tcplab.tbit.probe import run_suite
from tcplab.tbit.real import Lab, RawTransport, missing

WHY = missing()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")


@pytest.fixture(scope="module")
def lab():
    with Lab() as lab:
        yield lab
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert lab.C not in left and lab.R not in left and lab.S not in left, "the lab removed its namespaces"


def one(rows, test):
    return next(r for r in rows if r["test"] == test)


@pytest.mark.parametrize("iw", [2, 4])
def test_initcwnd(lab, iw):
    lab.configure(initcwnd=iw, sysctls=RESET)
    r = one(run_suite(lab.tr, ["icw"], runs=5), "icw")
    assert r["verdict"] == str(iw) and r["agree"] >= 4, r


@pytest.mark.parametrize("sack, verdict", [(1, "yes"), (0, "no")])
def test_sack_on_and_off(lab, sack, verdict):
    lab.configure(sysctls={**RESET, "tcp_sack": sack})
    r = one(run_suite(lab.tr, ["sack_advertised"], runs=5), "sack_advertised")
    assert r["verdict"] == verdict and r["agree"] == 5, r


def test_initial_rto_of_a_syn(lab):
    # Seddigh & Devetsikiotis §3: the SYN goes unanswered; the kernel's initial RTO is 1 s
    # (RFC 6298 §2.1), and with tcp_syn_linear_timeouts = 0 it doubles (§5.5).
    lab.configure(sysctls={**RESET, "tcp_syn_linear_timeouts": 0})
    r = one(run_suite(lab.tr, ["rto_syn"], runs=1, timer_intervals=2), "rto_syn")
    first, second = r["intervals"]
    assert 0.95 <= first <= 1.2, r
    assert 1.8 <= second / first <= 2.2, r


def test_data_rto_and_backoff(lab):
    # Nothing acknowledged: the first data RTO is the kernel's minimum, 200 ms, plus the RTT
    # terms (a few ms here, more on a loaded machine); then doubled.
    lab.configure(sysctls=RESET)
    r = one(run_suite(lab.tr, ["rto_data"], runs=1, timer_intervals=2), "rto_data")
    first, second = r["intervals"]
    assert 0.19 <= first <= 0.5, r
    assert 1.8 <= second / first <= 2.2, r


def _available_cc() -> set:
    try:
        return set(open("/proc/sys/net/ipv4/tcp_available_congestion_control").read().split())
    except OSError:
        return set()


# The host's default congestion control is what a new namespace starts with (bbr on some
# machines): the tests below name cubic unless they vary it.


@pytest.mark.parametrize("early_retrans, verdict", [(3, "yes"), (0, "no")])
def test_tail_loss_probe_on_and_off(lab, early_retrans, verdict):
    # RFC 8985 §7, Linux `tcp_schedule_loss_probe`: tcp_early_retrans 3 (default) probes the tail
    # one PTO (2·SRTT + 2 ms) after the last send; 0 leaves it to the RTO (200 ms + SRTT).
    lab.configure(congctl="cubic", sysctls={**RESET, "tcp_early_retrans": early_retrans})
    r = one(run_suite(lab.tr, ["tlp"], runs=5), "tlp")
    assert r["verdict"] == verdict and r["agree"] >= 4, r


@pytest.mark.parametrize(
    "sysctls, verdict",
    [
        ({}, "RACK"),
        # Since the RFC 6675 code was removed (2025), tcp_recovery's bit 0x1 has no effect.
        ({"tcp_recovery": 0}, "RACK"),
        ({"tcp_early_retrans": 0}, "RACK"),
        ({"tcp_recovery": 0, "tcp_early_retrans": 0}, "RACK"),
        # Without SACK there is no RACK: the hole waits for the RTO.
        ({"tcp_sack": 0}, "dupthresh"),
    ],
)
def test_rack_or_dupthresh(lab, sysctls, verdict):
    lab.configure(congctl="cubic", sysctls={**RESET, **sysctls})
    r = one(run_suite(lab.tr, ["rack"], runs=5), "rack")
    assert r["verdict"] == verdict and r["agree"] >= 4, r


@pytest.mark.parametrize("cc, verdict", [("cubic", "CUBIC"), ("reno", "Reno"), ("bbr", "no reduction")])
def test_window_after_a_loss(lab, cc, verdict):
    # cubic keeps 717/1024 of the window, reno half; BBR v1 restores it after recovery.
    if cc not in _available_cc():
        pytest.skip(f"this kernel has no {cc} (tcp_available_congestion_control; modprobe tcp_{cc})")
    lab.configure(congctl=cc, sysctls=RESET)
    r = one(run_suite(lab.tr, ["cc_beta"], runs=5), "cc_beta")
    assert r["verdict"] == verdict and r["agree"] >= 4, r


@pytest.mark.parametrize("ecn, verdict", [(0, "no"), (1, "yes, data ECT(0)"), (2, "yes, data ECT(0)")])
def test_ecn_negotiation(lab, ecn, verdict):
    # RFC 3168 §6.1.1: an ECN-setup SYN gets an ECE (not CWR) SYN-ACK when the server accepts
    # ECN (tcp_ecn 1, or 2: only when asked), and the data then goes out ECT(0).
    lab.configure(congctl="cubic", sysctls={**RESET, "tcp_ecn": ecn})
    r = one(run_suite(lab.tr, ["ecn"], runs=5), "ecn")
    assert r["verdict"] == verdict and r["agree"] == 5, r


@pytest.mark.parametrize("cc, verdict", [("cubic", "yes"), ("reno", "no")])
def test_hystart(lab, cc, verdict):
    # cubic's HyStart (delay detector) ends slow start when the prober adds 15 ms to the round
    # trip; reno has no HyStart and keeps doubling.
    lab.configure(congctl=cc, sysctls=RESET)
    r = one(run_suite(lab.tr, ["hystart"], runs=5), "hystart")
    assert r["verdict"] == verdict and r["agree"] >= 4, r


@pytest.mark.parametrize("path, verdict", [("/", "no"), ("/paced/400000", "yes")])
def test_pacing(lab, path, verdict):
    # cubic without the fq qdisc sends a flight as the ACKs release it; the server application
    # capping its rate (SO_MAX_PACING_RATE, asked through the lab server's /paced/N) makes TCP
    # pace itself, spreading each flight over much of the round trip.
    lab.configure(congctl="cubic", sysctls=RESET)
    r = one(run_suite(lab.tr, ["pacing"], runs=5, path=path), "pacing")
    assert r["verdict"] == verdict and r["agree"] >= 4, r


def test_probe_answers_arp_for_its_address(lab):
    # An address the router has no static entry for: the router asks by ARP and the prober
    # answers (what `tcplab tbit --host ... --src ...` relies on outside the lab).
    lab.configure(sysctls=RESET, initcwnd=3)
    tr = RawTransport.for_host(f"{lab.server_ip}:{lab.port}", src="10.203.1.77", netns=lab.C, max_wait=3.0)
    try:
        r = one(run_suite(tr, ["icw"], runs=1), "icw")
    finally:
        tr.shutdown()
    assert r["verdict"] == "3", r
    with pytest.raises(ValueError, match="--src"):
        RawTransport.for_host(f"{lab.server_ip}:{lab.port}", netns=lab.C)
    with pytest.raises(ValueError, match="IPv4"):
        RawTransport.for_host("server.example:80", src="10.203.1.77", netns=lab.C)


def test_cli_host(lab):
    from click.testing import CliRunner

    from tcplab.cli import main

    lab.configure(sysctls=RESET, initcwnd=2)
    args = ["tbit", "--host", f"{lab.server_ip}:{lab.port}", "--src", "10.203.1.78", "--netns", lab.C, "--tests", "icw", "--runs", "2", "--json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    import json

    assert [(x["test"], x["verdict"]) for x in json.loads(r.output)] == [("icw", "2")]
    r = CliRunner().invoke(main, ["tbit", "--host", f"{lab.server_ip}:{lab.port}", "--netns", lab.C])
    assert r.exit_code == 2 and "--src" in r.output


def test_an_interrupted_lab_removes_what_it_made():
    import os
    import signal
    import sys

    code = "import time\nfrom tcplab.tbit.real import Lab\nlab = Lab().__enter__()\nprint(lab.C, lab.R, lab.S, flush=True)\ntime.sleep(30)\n"
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env={**os.environ})
    try:
        names = p.stdout.readline().split()
        assert len(names) == 3, names
        assert all(n in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout for n in names)
        p.send_signal(signal.SIGTERM)
        p.wait(15)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(5)
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(n in left for n in names), left


def test_cli_lab_quick():
    from click.testing import CliRunner

    from tcplab.cli import main

    r = CliRunner().invoke(main, ["tbit", "--lab", "--quick", "--runs", "1", "--json"])
    import json

    assert r.output.lstrip().startswith("["), r.output[:2000]
    rows = json.loads(r.output)
    assert {x["config"] for x in rows} == {"initcwnd 2", "initcwnd 4", "tcp_sack 0", "tcp_syn_linear_timeouts 0"}
    assert all(x["match"] is not False for x in rows), [x for x in rows if x["match"] is False]
    assert r.exit_code == 0


def test_cli_lab_initcwnd():
    # An initial window the fixed configurations do not have: the route in the server's
    # namespace gets it, and ICW reads it from the real kernel.
    from click.testing import CliRunner

    from tcplab.cli import main

    r = CliRunner().invoke(main, ["tbit", "--lab", "--initcwnd", "6", "--tests", "icw", "--runs", "2", "--json"])
    import json

    assert r.output.lstrip().startswith("["), r.output[:2000]
    rows = json.loads(r.output)
    assert [(x["config"], x["test"], x["configured"]) for x in rows] == [("initcwnd 6", "icw", "6")]
    assert rows[0]["verdict"] == "6" and rows[0]["match"] is True, rows
    assert r.exit_code == 0


def test_cli_lab_initcwnd_refusals():
    from click.testing import CliRunner

    from tcplab.cli import main

    for args, says in [(["--lab", "--initcwnd", "6", "--quick"], "alternatives"), (["--sim", "rfc", "--initcwnd", "6"], "applies to --lab"),
                       (["--lab", "--initcwnd", "0"], "0")]:
        r = CliRunner().invoke(main, ["tbit", *args])
        assert r.exit_code != 0 and says in r.output, (args, r.output)


def test_cli_host_skips_what_the_transport_cannot_do_and_prints_the_rest(lab):
    # A real server probed with --host (here the lab's, from its client namespace): rto_syn needs
    # the server to open a connection, which only a lab can make it do; it is skipped with the
    # reason, and the other verdicts are printed.
    from click.testing import CliRunner

    from tcplab.cli import main

    lab.configure(sysctls=RESET)
    args = ["tbit", "--host", f"{lab.server_ip}:{lab.port}", "--src", lab.alias, "--netns", lab.C, "--tests", "sack_advertised,rto_syn", "--runs", "1"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert "skipped: this transport cannot make the server open a connection" in r.output, r.output
    assert "SACK advertised" in r.output and "yes" in r.output, r.output


KILLED_LAB = """
import os, sys, time
from tcplab.tbit.real import Lab
lab = Lab().__enter__()
print(" ".join([lab.C, lab.R, lab.S, str(lab.procs[0].pid)]), flush=True)
time.sleep(60)
"""


def test_a_killed_lab_is_removed_by_testbed_cleanup_and_its_server_dies_with_it():
    import os
    import signal
    import sys
    import time

    from click.testing import CliRunner

    from tcplab.cli import main

    p = subprocess.Popen([sys.executable, "-c", KILLED_LAB], stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        line = p.stdout.readline().split()
        assert len(line) == 4, "the lab did not come up"
        names, server = line[:3], int(line[3])
    finally:
        p.kill()  # SIGKILL: no handler, no atexit
        p.wait(10)
    try:
        # PR_SET_PDEATHSIG: the HTTP server dies with the process that started it.
        for _ in range(100):
            if not os.path.exists(f"/proc/{server}") or open(f"/proc/{server}/stat").read().split()[2] == "Z":
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the lab's HTTP server outlived its parent")
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert all(n in left for n in names), "SIGKILL left the namespaces (what cleanup is for)"
        r = CliRunner().invoke(main, ["testbed", "cleanup"])
        assert r.exit_code == 0 and all(n in r.output for n in names), r.output
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert not any(n in left for n in names), left
    finally:  # whatever an assertion says, nothing is left behind
        if os.path.exists(f"/proc/{server}"):
            os.kill(server, signal.SIGKILL)
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        for n in names:
            if n in left:
                subprocess.run(["ip", "netns", "del", n], capture_output=True, timeout=15)
