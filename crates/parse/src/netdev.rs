//! Each network interface's counters (`/proc/net/dev`, read by
//! procfs-core one line at a time: one odd line loses only itself), and
//! which guest's interface a host interface is: PVE names a VM's `netN`
//! on the host `tapVMIDiN` and a container's `vethVMIDiN`. Counted from
//! the host's side, so a guest's receive is the interface's transmit (as
//! PVE's own graphs swap them).

use procfs_core::FromBufRead as _;
use procfs_core::net::InterfaceDeviceStatus;

use crate::cgroup::Guest;

/// One interface's counters since it came up.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Counters {
    pub name: String,
    pub rx_bytes: u64,
    pub rx_packets: u64,
    pub rx_drop: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_drop: u64,
}

/// The interfaces of `/proc/net/dev`, in its order.
pub fn interfaces(text: &str) -> Vec<Counters> {
    let header = "Inter-|\n face |\n";
    text.lines()
        .skip(2)
        .filter(|l| l.contains(':') && l.split_ascii_whitespace().count() >= 17)
        .filter_map(|l| {
            let one =
                InterfaceDeviceStatus::from_buf_read(format!("{header}{l}\n").as_bytes()).ok()?;
            let d = one.0.into_values().next()?;
            // The kernel's names: 1 to 15 bytes, no space, `/` or `:`.
            let named = (1..=15).contains(&d.name.len())
                && !d
                    .name
                    .bytes()
                    .any(|b| b.is_ascii_whitespace() || b == b'/' || b == b':');
            named.then_some(())?;
            Some(Counters {
                name: d.name,
                rx_bytes: d.recv_bytes,
                rx_packets: d.recv_packets,
                rx_drop: d.recv_drop,
                tx_bytes: d.sent_bytes,
                tx_packets: d.sent_packets,
                tx_drop: d.sent_drop,
            })
        })
        .collect()
}

/// The guest and its `netN` behind a host interface: `tap104i0` is VM
/// 104's net0, `veth105i1` container 105's net1.
pub fn guest_interface(name: &str) -> Option<(Guest, u32)> {
    let (guest, rest): (fn(u32) -> Guest, &str) = match name {
        n if n.starts_with("tap") => (Guest::Vm, &n[3..]),
        n if n.starts_with("veth") => (Guest::Container, &n[4..]),
        _ => return None,
    };
    let (id, index) = rest.split_once('i')?;
    let digits = |s: &str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(id) || !digits(index) {
        return None;
    }
    let id: u32 = id.parse().ok().filter(|id| *id >= 100)?;
    Some((guest(id), index.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machines_interfaces_are_read_each_on_its_own() {
        let text = std::fs::read_to_string(format!(
            "{}/../../fixtures/guest/proc-net-dev",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let all = interfaces(&text);
        let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["lo", "ifb0", "ifb1", "eth0"]);
        assert_eq!(
            all[3],
            Counters {
                name: "eth0".into(),
                rx_bytes: 237_555_010,
                rx_packets: 6242,
                rx_drop: 0,
                tx_bytes: 347_996,
                tx_packets: 3708,
                tx_drop: 0,
            }
        );
        // A truncated line is left out, the others stay.
        let cut = text.replace("ifb1:       0       0    0    0", "ifb1:       0");
        assert_eq!(interfaces(&cut).len(), 3);
        // A line with no name before its colon (the fuzzer's first find)
        // names no interface.
        let nameless = text.replace("  ifb0:", "  ifb0 0\n:");
        let names: Vec<String> = interfaces(&nameless).into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["lo", "ifb1", "eth0"]);
    }

    #[test]
    fn pves_interface_names_give_the_guest_and_its_net() {
        assert_eq!(guest_interface("tap104i0"), Some((Guest::Vm(104), 0)));
        assert_eq!(
            guest_interface("veth105i1"),
            Some((Guest::Container(105), 1))
        );
        for none in [
            "eth0",
            "tap",
            "tap104",
            "tap104i",
            "tapi0",
            "tap12i0",
            "vmbr0",
            "fwpr104p0",
            "tap1x4i0",
        ] {
            assert_eq!(guest_interface(none), None, "{none}");
        }
    }
}
