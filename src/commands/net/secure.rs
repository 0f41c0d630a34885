//! The secure migration channel of a pair, each way: `pveprobe
//! net-migrate` started on the sending node over the run's ssh (its stdin
//! held open, so it stops when the run ends), which opens PVE's ssh tunnel
//! to the other node (`net::migrate`) and answers with the stream.

use std::net::IpAddr;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::migrate;
use super::options::{MAX_LINE, Options, SLACK};
use super::report::{End, PairResult, PairStatus};
use crate::model::net::{SecureStream, Way};
use crate::sys::conversation::{self, Conversation};

/// What the secure channel is run with: how the nodes are reached, the
/// remote command's words, the run's options.
pub(super) struct Channel<'a> {
    pub ssh: &'a crate::nodes::remote::Ssh,
    pub command: &'a [String],
    pub opts: &'a Options,
}

/// The secure migration channel each way: `net-migrate` on the
/// sending node, to the other's address on the link.
pub(super) fn secure(channel: &Channel, result: &mut PairResult, addr_a: IpAddr, addr_b: IpAddr) {
    let ways = [
        (
            Way::Forward,
            result.a.clone(),
            result.b.node.clone(),
            addr_b,
        ),
        (Way::Back, result.b.clone(), result.a.node.clone(), addr_a),
    ];
    for (way, from, to, to_addr) in ways {
        let tell = format!("secure {}->{to}", from.node);
        match migrate_way(channel, &from, &to, to_addr, way) {
            Ok(stream) => result.secure.push(stream),
            Err(why) => {
                result.status = PairStatus::Partial;
                let said = format!("{tell}: {why}");
                result.detail = Some(match result.detail.take() {
                    Some(d) => format!("{d}; {said}"),
                    None => said,
                });
            }
        }
    }
}

/// One way of the secure channel, from `from` to node `to` at `to_addr`.
fn migrate_way(
    channel: &Channel,
    from: &End,
    to: &str,
    to_addr: IpAddr,
    way: Way,
) -> Result<SecureStream, String> {
    let o = channel.opts;
    let connect = channel.ssh.connect_timeout;
    let mut args: Vec<String> = vec![
        "net-migrate".into(),
        "--node".into(),
        to.to_string(),
        "--to".into(),
        to_addr.to_string(),
        "--way".into(),
        match way {
            Way::Forward => "forward",
            Way::Back => "back",
        }
        .into(),
        "--seconds".into(),
        o.net_seconds.to_string(),
        "--connect-timeout".into(),
        connect.to_string(),
        "--pve-config".into(),
        o.pve_config.display().to_string(),
    ];
    for word in channel.command {
        args.extend(["--remote-word".into(), word.clone()]);
    }
    // Its own ssh's connection, the stream, the cipher's half second.
    let limit = Duration::from_secs(u64::from(o.net_seconds) + 2 * u64::from(connect) + 45);
    let (program, rest) = (
        crate::nodes::remote::SSH,
        channel.ssh.args(
            &from.node(),
            &crate::nodes::remote::timed_line(channel.command, &args, limit),
            true,
        ),
    );
    let (tx, lines) = mpsc::channel();
    // Its stdin stays open until the answer: when this run ends first,
    // the node's net-migrate reads its end and stops, and its ssh and
    // the target's sink with it.
    let conversation = Conversation::start(Command::new(program).args(rest), 0, MAX_LINE, tx)
        .map_err(|e| format!("cannot run ssh: {}", crate::error::describe(&e)))?;
    // Nothing here raises `stop`: the run's own end closes the stdin.
    let never = std::sync::atomic::AtomicBool::new(false);
    let answer = conversation::line_after(
        &lines,
        migrate::ANSWER_PREFIX,
        Instant::now() + limit + SLACK,
        &never,
    )
    .ok()
    .and_then(|json| serde_json::from_str::<migrate::MigrateAnswer>(&json).ok());
    let finished = conversation.finish(Duration::from_secs(5));
    match answer {
        Some(migrate::MigrateAnswer {
            stream: Some(s), ..
        }) => Ok(s),
        Some(migrate::MigrateAnswer { error, .. }) => {
            Err(error.unwrap_or_else(|| "no stream".into()))
        }
        None => Err(format!(
            "{}'s net-migrate gave no answer ({})",
            from.node,
            finished.first_error_line()
        )),
    }
}
