"""What the benchmark scripts share."""
import os
import sys

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
