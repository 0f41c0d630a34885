//! What a sysfs attribute of a block device says: the active I/O
//! scheduler, and the SCSI VPD pages' serial number and rotation rate.

/// `none [mq-deadline] kyber` -> `mq-deadline`.
pub fn active_scheduler(text: &str) -> Option<String> {
    let text = text.trim();
    let active = match (text.find('['), text.find(']')) {
        (Some(a), Some(b)) if a < b => &text[a + 1..b],
        _ if !text.contains(' ') => text,
        _ => return None,
    };
    (!active.is_empty()).then(|| active.to_string())
}

/// The unit serial number from a SCSI VPD page 0x80 (bytes 4.. as text).
/// The nominal rotation rate of VPD page B1h (Block Device
/// Characteristics), bytes 4-5: `0401h`-`FFFEh` is rpm; `0000h` (not
/// reported) and `0001h` (not rotating) give `None`.
pub fn vpd_rotation_rpm(page: &[u8]) -> Option<u32> {
    if page.get(1) != Some(&0xb1) {
        return None;
    }
    let rate = u16::from_be_bytes([*page.get(4)?, *page.get(5)?]);
    (0x0401..=0xfffe).contains(&rate).then_some(u32::from(rate))
}

pub fn vpd_serial(page: &[u8]) -> Option<String> {
    if page.len() < 4 || page[1] != 0x80 {
        return None;
    }
    let len = usize::from(u16::from_be_bytes([page[2], page[3]]));
    let body = page.get(4..4 + len.min(page.len() - 4))?;
    let text: String = body
        .iter()
        .filter(|b| b.is_ascii_graphic() || **b == b' ')
        .map(|b| *b as char)
        .collect();
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_is_the_bracketed_one() {
        assert_eq!(
            active_scheduler("none [mq-deadline] kyber bfq\n").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(
            active_scheduler("[none] mq-deadline").as_deref(),
            Some("none")
        );
        assert_eq!(active_scheduler("none\n").as_deref(), Some("none"));
        assert_eq!(active_scheduler("a b"), None);
        assert_eq!(active_scheduler("[]"), None);
    }

    #[test]
    fn vpd_page_b1_rotation_rate() {
        // A 7,200 rpm disk: 0x1c20 in bytes 4-5.
        let mut page = vec![0u8; 64];
        page[1] = 0xb1;
        page[4..6].copy_from_slice(&7200u16.to_be_bytes());
        assert_eq!(vpd_rotation_rpm(&page), Some(7200));
        page[4..6].copy_from_slice(&1u16.to_be_bytes());
        assert_eq!(vpd_rotation_rpm(&page), None, "not rotating");
        page[4..6].copy_from_slice(&0u16.to_be_bytes());
        assert_eq!(vpd_rotation_rpm(&page), None, "not reported");
        page[4..6].copy_from_slice(&15000u16.to_be_bytes());
        page[1] = 0x80;
        assert_eq!(vpd_rotation_rpm(&page), None, "another page");
        assert_eq!(vpd_rotation_rpm(&[0, 0xb1, 0, 0x3c, 0x1c]), None, "short");
    }

    #[test]
    fn vpd_page_80_serial() {
        let mut page = vec![0x00, 0x80, 0x00, 0x0c];
        page.extend_from_slice(b"  S6PUNX0R12");
        assert_eq!(vpd_serial(&page).as_deref(), Some("S6PUNX0R12"));
        assert_eq!(vpd_serial(&[0, 0x83, 0, 1, b'x']), None, "wrong page");
        assert_eq!(
            vpd_serial(&[0, 0x80, 0xff, 0xff, b'A']).as_deref(),
            Some("A"),
            "length beyond the data"
        );
        assert_eq!(vpd_serial(&[0, 0x80]), None);
    }
}
