//! `pveprobe load`'s worker VMs, the first part of the command (issue:
//! the cluster's storage under many guests at once): what a worker boots
//! and what it does. A worker boots no OS: the node's kernel, and an
//! initramfs pveprobe builds on the node ([`initramfs`]: the modules its
//! virtual disks need, from `/lib/modules`, in their load order, and the
//! static pveprobe as `/init`). As the VM's PID 1, pveprobe
//! (`load-worker`, [`worker`]) loads the modules, finds its raw virtual
//! disks and talks to the node over the VM's first serial port, which PVE
//! puts on a socket (`serial0: socket`, `/var/run/qemu-server/VMID.serial0`):
//! a job in, its result out ([`wire`]), and the VM powers off when told
//! or when the node goes away. It measures its disks, never a filesystem.

pub mod args;
pub mod run;

pub mod initramfs;
pub mod wire;
pub mod worker;
