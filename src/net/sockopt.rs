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

/// A datagram if one is waiting, else WouldBlock at once (MSG_DONTWAIT):
/// the socket's blocking mode and timeout stay as they are.
pub fn recv_from_now(
    sock: &UdpSocket,
    buf: &mut [u8],
) -> std::io::Result<(usize, std::net::SocketAddr)> {
    use nix::sys::socket::{MsgFlags, SockaddrStorage, recvmsg};
    let mut iov = [std::io::IoSliceMut::new(buf)];
    let msg = recvmsg::<SockaddrStorage>(sock.as_raw_fd(), &mut iov, None, MsgFlags::MSG_DONTWAIT)
        .map_err(std::io::Error::from)?;
    let from = msg.address.and_then(|a| {
        if let Some(v4) = a.as_sockaddr_in() {
            Some(std::net::SocketAddr::from(std::net::SocketAddrV4::new(
                v4.ip(),
                v4.port(),
            )))
        } else {
            a.as_sockaddr_in6().map(|v6| {
                std::net::SocketAddr::from(std::net::SocketAddrV6::new(
                    v6.ip(),
                    v6.port(),
                    v6.flowinfo(),
                    v6.scope_id(),
                ))
            })
        }
    });
    from.map(|f| (msg.bytes, f))
        .ok_or_else(|| std::io::Error::other("a datagram without a sender"))
}

/// Waits until `sock` has a datagram or `wait` (rounded down to whole
/// milliseconds) has passed.
pub fn wait_readable(sock: &UdpSocket, wait: std::time::Duration) {
    let mut fds = [libc::pollfd {
        fd: sock.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    }];
    let ms = libc::c_int::try_from(wait.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd for an open socket.
    unsafe { libc::poll(fds.as_mut_ptr(), 1, ms) };
}
