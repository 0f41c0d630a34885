//! Which DNS replies count: the checks pveprobe's own DNS test and
//! Net::DNS (pveperf's) apply to a packet, decoded with hickory-proto.

use hickory_proto::op::{Message, MessageType, ResponseCode};
use hickory_proto::rr::{Name, RecordType};

/// True when `packet` is the answer to our query `id` for `name`.
pub fn is_answer(packet: &[u8], id: u16, name: &Name) -> bool {
    match Message::from_vec(packet) {
        Ok(msg) => {
            msg.metadata.id == id
                && msg.metadata.message_type == MessageType::Response
                && msg.queries.len() == 1
                && msg.queries[0].name() == name
                && msg.queries[0].query_type() == RecordType::A
        }
        Err(_) => false,
    }
}

/// What Net::DNS makes of a reply to query `id`: `None` when it does not
/// accept it (undecodable, no QR bit, another id), else whether it ends the
/// query (NOERROR, NXDOMAIN) or sends Net::DNS on to the next server.
pub fn netdns_accepts(packet: &[u8], id: u16) -> Option<bool> {
    let msg = Message::from_vec(packet).ok()?;
    let ends_query = matches!(
        msg.metadata.response_code,
        ResponseCode::NoError | ResponseCode::NXDomain
    );
    (msg.metadata.message_type == MessageType::Response && msg.metadata.id == id)
        .then_some(ends_query)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hickory_proto::op::{OpCode, Query};

    fn encode_query(name: &Name, id: u16) -> Result<Vec<u8>, hickory_proto::ProtoError> {
        let mut msg = Message::new(id, MessageType::Query, OpCode::Query);
        msg.metadata.recursion_desired = true;
        msg.add_query(Query::query(name.clone(), RecordType::A));
        msg.to_vec()
    }

    fn response_to(query: &[u8]) -> Message {
        let q = Message::from_vec(query).unwrap();
        let mut r = Message::new(q.metadata.id, MessageType::Response, OpCode::Query);
        r.add_query(q.queries[0].clone());
        r
    }

    #[test]
    fn matches_only_our_answer() {
        let name = Name::from_ascii("test1.example.com.").unwrap();
        let query = encode_query(&name, 4242).unwrap();
        let good = response_to(&query).to_vec().unwrap();
        assert!(is_answer(&good, 4242, &name));
        assert!(!is_answer(&good, 4243, &name), "wrong id");
        let other = Name::from_ascii("test2.example.com.").unwrap();
        assert!(!is_answer(&good, 4242, &other), "wrong question");
        assert!(!is_answer(&query, 4242, &name), "a query is not an answer");
        assert!(!is_answer(&good[..5], 4242, &name), "truncated");
        assert!(!is_answer(b"\xff\xff garbage", 4242, &name));
        let upper = Name::from_ascii("TEST1.Example.COM.").unwrap();
        assert!(is_answer(
            &response_to(&encode_query(&upper, 7).unwrap())
                .to_vec()
                .unwrap(),
            7,
            &name
        ));
    }

    #[test]
    fn net_dns_accepts_by_qr_and_id_and_moves_on_after_servfail() {
        let name = Name::from_ascii("test1.example.com.").unwrap();
        let query = encode_query(&name, 4242).unwrap();
        let nxdomain = {
            let mut r = response_to(&query);
            r.metadata.response_code = ResponseCode::NXDomain;
            r.to_vec().unwrap()
        };
        assert_eq!(netdns_accepts(&nxdomain, 4242), Some(true));
        assert_eq!(netdns_accepts(&nxdomain, 4243), None, "another id");
        assert_eq!(netdns_accepts(&query, 4242), None, "no QR bit");
        assert_eq!(netdns_accepts(b"garbage", 4242), None);
        let mut servfail = response_to(&query);
        servfail.metadata.response_code = ResponseCode::ServFail;
        assert_eq!(
            netdns_accepts(&servfail.to_vec().unwrap(), 4242),
            Some(false)
        );
        // Net::DNS does not check the question: an answer for another name counts.
        let other = Name::from_ascii("other.example.").unwrap();
        let mut wrong_name = response_to(&encode_query(&other, 4242).unwrap());
        wrong_name.metadata.response_code = ResponseCode::NXDomain;
        assert_eq!(
            netdns_accepts(&wrong_name.to_vec().unwrap(), 4242),
            Some(true)
        );
    }
}
