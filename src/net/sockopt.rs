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
