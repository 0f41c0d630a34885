"""What the benchmark scripts share."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PAGE_REPORTING = "/sys/module/page_reporting/parameters/page_reporting_order"


def page_reporting_off():
    """Turns a VM guest's free page reporting off (see bench/README.md) and
    returns the function that restores it, or None when there is nothing to
    turn off. On a guest with free page reporting (virtio-balloon), pages
    that drop_caches frees are handed to the host about 2 s later, and every
    page the next test puts in the page cache is then faulted in again by
    the host: a tool that reads right after dropping caches is then faster
    than one that sleeps first, and every figure is noisier. Off means the
    largest order the kernel takes, above any free block it has."""
    if not os.path.exists(PAGE_REPORTING):
        return None
    with open(PAGE_REPORTING) as f:
        order = f.read().strip()

    def set_order(value):
        try:
            with open(PAGE_REPORTING, "w") as f:
                f.write("%s\n" % value)
            return True
        except OSError:
            return False

    off = next((o for o in range(32, int(order), -1) if set_order(o)), None)
    if off is None:
        return None
    print("free page reporting off for the run (page_reporting_order %s -> %d)" % (order, off),
          file=sys.stderr)
    return lambda: set_order(order)


HALT_POLL = "/sys/module/haltpoll/parameters/guest_halt_poll_ns"


def halt_poll_on(ns=200000):
    """Turns a VM guest's halt polling on (see bench/README.md) and returns
    the function that restores it, or None when there is no haltpoll
    cpuidle driver. With it off (guest_halt_poll_ns=0, as this project's
    Firecracker VMs boot), an idle vCPU halts at once, and waking it (the
    loop device's worker, or the tool once its I/O completes) is a VM exit
    and a host reschedule: 15-65 us more per I/O, varying from run to run, more than
    the I/O itself on a RAM-backed device. One fio job of 4 KiB random
    reads at queue depth 1 ranged 12,900-33,900 IOPS over eight runs with
    it off, 67,800-80,000 with 200 us of polling."""
    if not os.path.exists(HALT_POLL):
        return None
    with open(HALT_POLL) as f:
        old = f.read().strip()
    if int(old) >= ns:
        return None
    try:
        with open(HALT_POLL, "w") as f:
            f.write("%d\n" % ns)
    except OSError:
        return None
    print("guest halt polling on for the run (guest_halt_poll_ns %s -> %d)" % (old, ns), file=sys.stderr)

    def restore():
        with open(HALT_POLL, "w") as f:
            f.write("%s\n" % old)
    return restore


TICK = os.sysconf("SC_CLK_TCK")


def cpu_and_rss(pid):
    """User+system time of pid and its waited-for children (s), and RSS (KiB)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))
    with open("/proc/%d/statm" % pid) as f:
        rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    return ticks / TICK, rss


def measure(args):
    """Runs args to its end: its CPU share (%) over its wall time, from
    the kernel's own account as it exits (wait4's rusage, its waited-for
    children included, in microseconds, not /proc's 10 ms ticks), and its
    largest RSS (KiB)."""
    start = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    rss = 0
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        try:
            rss = max(rss, cpu_and_rss(p.pid)[1])
        except (OSError, IndexError, ValueError):
            pass
        time.sleep(0.05)
    wall = time.monotonic() - start
    p.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen is told
    if p.returncode != 0:
        sys.exit("%s: exit %d\n%s" % (args[0], p.returncode, p.stderr.read().decode()[-2000:]))
    return (ru.ru_utime + ru.ru_stime) / wall * 100.0, rss


def stop(p):
    """SIGTERM to p, then (after 20 s) SIGKILL; its rusage as it exits
    (as `measure` reads it), None when it had already been reaped."""
    if p.returncode is not None:
        return None
    p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 20
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            p.kill()
            _, status, ru = os.wait4(p.pid, 0)
            break
        time.sleep(0.05)
    p.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen is told
    return ru


class Vms:
    def __init__(self, n):
        self.dir = tempfile.mkdtemp(prefix="pveprobe-bench.", dir="/var/tmp")
        self.disks = tempfile.mkdtemp(prefix="pveprobe-bench.", dir="/dev/shm")
        self.qmp = os.path.join(self.dir, "qmp")
        self.pve = os.path.join(self.dir, "pve")
        os.makedirs(self.qmp)
        os.makedirs(os.path.join(self.pve, "qemu-server"))
        with open(os.path.join(self.pve, "storage.cfg"), "w") as f:
            f.write("dir: local\n\tpath /var/lib/vz\n\tcontent images\n")
        self.procs = []
        for i in range(n):
            vmid = 9000 + i
            disk = os.path.join(self.disks, "%d.raw" % vmid)
            with open(disk, "wb") as f:
                f.truncate(64 << 20)
            with open(os.path.join(self.pve, "qemu-server", "%d.conf" % vmid), "w") as f:
                f.write("name: cost-%d\nscsi0: local:%d/vm-%d-disk-0.raw,size=64M\n" % (i, vmid, vmid))
            sock = os.path.join(self.qmp, "%d.qmp" % vmid)
            # As qemu-server starts a VM: its pidfile beside its socket, a
            # balloon device; two vCPUs (top reads each one's thread).
            pidfile = os.path.join(self.qmp, "%d.pid" % vmid)
            self.procs.append(subprocess.Popen(
                ["qemu-system-x86_64", "-S", "-nodefaults", "-display", "none", "-m", "32",
                 "-smp", "2", "-pidfile", pidfile, "-device", "virtio-balloon-pci,id=balloon0",
                 "-machine", "q35,accel=tcg", "-qmp", "unix:%s,server=on,wait=off" % sock,
                 "-drive", "file=%s,if=none,id=drive-scsi0,format=raw,cache=none,aio=io_uring" % disk,
                 "-device", "virtio-blk-pci,drive=drive-scsi0"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 60
        while len([s for s in os.listdir(self.qmp) if s.endswith(".qmp")]) < n:
            if time.monotonic() > deadline:
                raise SystemExit("the VMs did not all start")
            time.sleep(0.2)

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.rmtree(self.disks, ignore_errors=True)
