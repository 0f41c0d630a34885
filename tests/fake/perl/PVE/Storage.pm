# A stand-in for Proxmox VE's storage library, for the tests of
# `--storage` on storages that need a volume activated or mapped (RBD,
# shared LVM): each call is logged to the fake pvesm's calls.log as
# `perl NAME VOLID`, and map_volume answers what the fake `pvesm path`
# answers (a real loop device). Put tests/fake/perl on PERL5LIB.
package PVE::Storage;

use strict;
use warnings;

sub logged {
    my ($what, @volids) = @_;
    my $dir = $ENV{PVEPROBE_FAKE_PVESM_DIR} or die "PVEPROBE_FAKE_PVESM_DIR is not set\n";
    open(my $log, '>>', "$dir/calls.log") or die "calls.log: $!\n";
    print $log join(' ', 'perl', $what, @volids), "\n";
    close($log);
}

sub config { return {}; }

sub activate_volumes {
    my ($cfg, $volids) = @_;
    logged('activate_volumes', @$volids);
}

sub map_volume {
    my ($cfg, $volid) = @_;
    logged('map_volume', $volid);
    open(my $out, '-|', 'pvesm', 'path', $volid) or die "pvesm path: $!\n";
    my $path = <$out>;
    close($out) or die "pvesm path $volid failed\n";
    chomp $path;
    return $path;
}

sub unmap_volume {
    my ($cfg, $volid) = @_;
    logged('unmap_volume', $volid);
}

sub deactivate_volumes {
    my ($cfg, $volids) = @_;
    logged('deactivate_volumes', @$volids);
}

1;
