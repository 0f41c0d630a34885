//! A UDP packet from a name server: is it the answer to our query, for
//! the bounded schedule and for Net::DNS's (pveperf's)?
//! The first two bytes are the query id; the rest is the packet.
#![no_main]

use hickory_proto::op::Message;
use hickory_proto::rr::Name;
use libfuzzer_sys::fuzz_target;
use pveprobe_parse::dns;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let id = u16::from_be_bytes([data[0], data[1]]);
    let packet = &data[2..];
    let name = Name::from_ascii("test123.nonexistent1700000000.com.").unwrap();
    if dns::is_answer(packet, id, &name) {
        let msg = Message::from_vec(packet).unwrap();
        assert_eq!(msg.metadata.id, id);
        assert_eq!(msg.queries.len(), 1);
        // What our bounded schedule accepts, Net::DNS's accepts too.
        assert!(dns::netdns_accepts(packet, id).is_some());
    }
    if dns::netdns_accepts(packet, id).is_some() {
        assert_eq!(Message::from_vec(packet).unwrap().metadata.id, id);
    }
});
