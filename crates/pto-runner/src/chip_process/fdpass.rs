//! Frames that carry file descriptors: the same length-prefixed JSON as
//! [`super::protocol`], with descriptors attached to the frame's first byte as
//! `SCM_RIGHTS` ancillary data (how the host hands a chip process the shared memory of a
//! host tensor or a comm domain without copying it).
//!
//! A receiver must read every frame with [`recv`] (a plain `read` would drop attached
//! descriptors). At most [`MAX_FDS`] descriptors travel with one frame.

use std::io::Read as _;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

use serde_json::Value;

use super::protocol::MAX_FRAME;

/// Most descriptors one frame carries.
pub const MAX_FDS: usize = 64;

fn cmsg_space(n: usize) -> usize {
    // SAFETY: a pure size computation.
    unsafe { libc::CMSG_SPACE((n * std::mem::size_of::<RawFd>()) as u32) as usize }
}

/// Sends `msg` with `fds` attached (the receiver gets its own duplicates).
pub fn send(sock: &UnixStream, msg: &Value, fds: &[RawFd]) -> std::io::Result<()> {
    if fds.len() > MAX_FDS {
        return Err(std::io::Error::other(format!(
            "{} descriptors in one frame (at most {MAX_FDS})",
            fds.len()
        )));
    }
    let body = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    if body.len() > MAX_FRAME {
        return Err(std::io::Error::other(
            "message too large for the chip-process channel",
        ));
    }
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
    frame.extend_from_slice(&body);
    let mut sent = 0usize;
    // Descriptors ride on the first sendmsg only.
    let mut control = vec![
        0u8;
        if fds.is_empty() {
            0
        } else {
            cmsg_space(fds.len())
        }
    ];
    while sent < frame.len() {
        let mut iov = libc::iovec {
            iov_base: frame[sent..].as_ptr() as *mut libc::c_void,
            iov_len: frame.len() - sent,
        };
        // SAFETY: a zeroed msghdr is valid; every pointer set below outlives the call.
        let mut hdr: libc::msghdr = unsafe { std::mem::zeroed() };
        hdr.msg_iov = &mut iov;
        hdr.msg_iovlen = 1;
        if sent == 0 && !fds.is_empty() {
            hdr.msg_control = control.as_mut_ptr().cast();
            hdr.msg_controllen = control.len() as _;
            // SAFETY: the control buffer has room for one header with `fds.len()` fds.
            unsafe {
                let c = libc::CMSG_FIRSTHDR(&hdr);
                (*c).cmsg_level = libc::SOL_SOCKET;
                (*c).cmsg_type = libc::SCM_RIGHTS;
                (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of_val(fds) as u32) as _;
                std::ptr::copy_nonoverlapping(
                    fds.as_ptr(),
                    libc::CMSG_DATA(c).cast::<RawFd>(),
                    fds.len(),
                );
            }
        }
        // SAFETY: `hdr` describes valid buffers; MSG_NOSIGNAL turns a closed peer into EPIPE.
        let n = unsafe { libc::sendmsg(sock.as_raw_fd(), &hdr, libc::MSG_NOSIGNAL) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        sent += n as usize;
        control.clear();
    }
    Ok(())
}

/// Reads one frame and the descriptors attached to it; `Ok(None)` at a clean end of stream.
pub fn recv(sock: &mut UnixStream) -> std::io::Result<Option<(Value, Vec<OwnedFd>)>> {
    let mut len = [0u8; 4];
    let mut control = vec![0u8; cmsg_space(MAX_FDS)];
    let mut fds = Vec::new();
    let mut got = 0usize;
    while got < 4 {
        let mut iov = libc::iovec {
            iov_base: len[got..].as_mut_ptr().cast(),
            iov_len: 4 - got,
        };
        // SAFETY: as in `send`.
        let mut hdr: libc::msghdr = unsafe { std::mem::zeroed() };
        hdr.msg_iov = &mut iov;
        hdr.msg_iovlen = 1;
        hdr.msg_control = control.as_mut_ptr().cast();
        hdr.msg_controllen = control.len() as _;
        // SAFETY: `hdr` describes valid buffers; received descriptors are close-on-exec.
        let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut hdr, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        // SAFETY: walking the control messages the kernel wrote into `control`.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&hdr);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                    let data = libc::CMSG_DATA(c).cast::<RawFd>();
                    let bytes = (*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                    for i in 0..bytes / std::mem::size_of::<RawFd>() {
                        fds.push(OwnedFd::from_raw_fd(*data.add(i)));
                    }
                }
                c = libc::CMSG_NXTHDR(&hdr, c);
            }
        }
        if n == 0 {
            if got == 0 {
                return Ok(None);
            }
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        got += n as usize;
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(std::io::Error::other(format!(
            "chip-process frame of {len} bytes exceeds the {MAX_FRAME}-byte limit"
        )));
    }
    let mut buf = vec![0u8; len];
    sock.read_exact(&mut buf)?;
    let v = serde_json::from_slice(&buf).map_err(std::io::Error::other)?;
    Ok(Some((v, fds)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::io::{Seek, Write};

    #[test]
    fn descriptors_travel_with_their_frame() {
        let (a, mut b) = UnixStream::pair().unwrap();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"shared").unwrap();
        send(&a, &json!({"op": "x"}), &[f.as_raw_fd()]).unwrap();
        send(&a, &json!({"op": "y"}), &[]).unwrap();
        let (v, fds) = recv(&mut b).unwrap().unwrap();
        assert_eq!((v["op"].as_str(), fds.len()), (Some("x"), 1));
        let mut g = std::fs::File::from(fds.into_iter().next().unwrap());
        g.rewind().unwrap();
        let mut s = String::new();
        g.read_to_string(&mut s).unwrap();
        assert_eq!(s, "shared");
        let (v, fds) = recv(&mut b).unwrap().unwrap();
        assert_eq!((v["op"].as_str(), fds.len()), (Some("y"), 0));
        drop(a);
        assert!(recv(&mut b).unwrap().is_none());
    }
}
