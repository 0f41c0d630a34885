//! Socket options std does not have: datagrams sent with the Don't
//! Fragment bit and no path-MTU cache in the way, so the size that
//! crosses is the link's, probed afresh.

use std::net::{IpAddr, UdpSocket};
use std::os::fd::AsRawFd;

fn set_int(
    sock: &UdpSocket,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> std::io::Result<()> {
    // SAFETY: a plain int option on an open socket.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// DF set on every datagram, the kernel's cached path MTU ignored
/// (`IP_PMTUDISC_PROBE`): a datagram larger than the local interface's
/// MTU fails with EMSGSIZE, one larger than the path's is dropped on the way.
pub fn set_dont_fragment(sock: &UdpSocket, family: IpAddr) -> std::io::Result<()> {
    match family {
        IpAddr::V4(_) => set_int(
            sock,
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            libc::IP_PMTUDISC_PROBE,
        ),
        IpAddr::V6(_) => {
            set_int(
                sock,
                libc::IPPROTO_IPV6,
                libc::IPV6_MTU_DISCOVER,
                libc::IPV6_PMTUDISC_PROBE,
            )?;
            set_int(sock, libc::IPPROTO_IPV6, libc::IPV6_DONTFRAG, 1)
        }
    }
}

/// Waits until `sock` has a datagram or `wait` has passed, to the
/// microsecond (ppoll(2)'s high-resolution timer; a socket's receive
/// timeout runs on the kernel's tick and can wake up to 4 ms late).
pub fn wait_readable(sock: &UdpSocket, wait: std::time::Duration) {
    let mut fds = [libc::pollfd {
        fd: sock.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    }];
    let timeout = libc::timespec {
        tv_sec: libc::time_t::try_from(wait.as_secs()).unwrap_or(libc::time_t::MAX),
        // Below 10^9: fits a c_long everywhere.
        tv_nsec: wait.subsec_nanos() as libc::c_long,
    };
    // SAFETY: one valid pollfd for an open socket, a valid timespec and no
    // signal mask.
    unsafe { libc::ppoll(fds.as_mut_ptr(), 1, &timeout, std::ptr::null()) };
}
