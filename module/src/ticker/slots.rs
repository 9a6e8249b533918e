//! On a cluster node: the slots a tick must leave alone.
//!
//! * **Moving the legacy way** — those this node is migrating out or importing (`CLUSTER NODES`,
//!   this node's line: `[<slot>->-<node>]`, `[<slot>-<-<node>]`). While a slot moves, its keys
//!   are split between two nodes (`MIGRATE` moves them a batch at a time), so a queue there may
//!   have its `schedule` here and a row there; a client's command on such a slot is redirected
//!   (`ASK`, `TRYAGAIN`) before it runs, a timer's work is not — so the timers wait until the
//!   slot has settled.
//! * **Moving atomically** (Valkey 9, `CLUSTER MIGRATESLOTS`) — the slots of a migration job
//!   `CLUSTER GETSLOTMIGRATIONS` lists as neither done nor failed nor cancelled: on the source,
//!   a write the timers make while the slot's writes are paused for the hand-over could miss
//!   the stream to the target; on the target, the keys arrive before the slot is owned.
//! * **Not this node's** — a slot this node's line does not list (the keys of a slot being
//!   imported atomically, or left behind until the server trims them): a timer writes only
//!   where a client's command would run.
//!
//! Pure parsing and the key slot (CRC16, as the server computes it); the server calls are the
//! caller's.

/// The slot of every key of queue `name` (its hashtag): CRC16-XMODEM of the name, mod 16384.
pub fn queue_slot(name: &[u8]) -> u16 {
    crc16(name) & 0x3fff
}

/// CRC16-XMODEM (poly 0x1021, init 0), as Valkey Cluster hashes keys.
fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in bytes {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The slots the `myself` line of a `CLUSTER NODES` reply marks as migrating or importing.
pub fn moving_slots(nodes: &str) -> Vec<u16> {
    let Some(line) = myself(nodes) else {
        return Vec::new();
    };
    line.split(' ')
        .skip(8)
        .filter_map(|field| field.strip_prefix('['))
        .filter_map(|marker| {
            let end = marker.find(|c: char| !c.is_ascii_digit())?;
            marker[..end].parse().ok()
        })
        .collect()
}

/// The `myself` line of a `CLUSTER NODES` reply.
fn myself(nodes: &str) -> Option<&str> {
    nodes.lines().find(|line| {
        line.split(' ')
            .nth(2)
            .is_some_and(|flags| flags.split(',').any(|f| f == "myself"))
    })
}

/// The slot ranges (inclusive) the `myself` line of a `CLUSTER NODES` reply serves.
pub fn owned_slots(nodes: &str) -> Vec<(u16, u16)> {
    let Some(line) = myself(nodes) else {
        return Vec::new();
    };
    line.split(' ').skip(8).filter_map(range).collect()
}

/// `<a>-<b>` or `<a>`: an inclusive range of slots.
fn range(field: &str) -> Option<(u16, u16)> {
    let (a, b) = field.split_once('-').unwrap_or((field, field));
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The slots of the atomic migrations still under way, from the `(slot_ranges, state)` of each
/// entry of `CLUSTER GETSLOTMIGRATIONS` (`slot_ranges`: `<a>-<b>` joined by spaces).
pub fn migrating_slots<'a>(
    entries: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<(u16, u16)> {
    const OVER: [&str; 3] = ["success", "failed", "cancelled"];
    entries
        .into_iter()
        .filter(|(_, state)| !OVER.contains(&state.to_ascii_lowercase().as_str()))
        .flat_map(|(ranges, _)| ranges.split(' ').filter_map(range))
        .collect()
}

/// Whether `slot` lies in one of `ranges`.
pub fn within(ranges: &[(u16, u16)], slot: u16) -> bool {
    ranges.iter().any(|&(a, b)| (a..=b).contains(&slot))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_match_cluster_keyslot() {
        // Values from a real server's CLUSTER KEYSLOT (and the cluster spec's own example).
        assert_eq!(crc16(b"123456789"), 0x31c3);
        assert_eq!(queue_slot(b"foo"), 12182);
        assert_eq!(queue_slot(b"bar"), 5061);
        assert_eq!(queue_slot(b"emq"), 9051);
        assert_eq!(queue_slot(b"123456789"), 12739);
    }

    #[test]
    fn only_this_nodes_markers_count() {
        let nodes = "\
a1 127.0.0.1:7001@17001 master - 0 0 1 connected 0-5460 [93->-b2]
b2 127.0.0.1:7002@17002 myself,master - 0 0 2 connected 5461-10922 [93-<-a1] [10923->-c3]
c3 127.0.0.1:7003@17003 master - 0 0 3 connected 10923-16383
";
        assert_eq!(moving_slots(nodes), vec![93, 10923]);
        assert_eq!(
            moving_slots("x 1:1@2 myself,master - 0 0 1 connected 0-16383\n"),
            Vec::<u16>::new()
        );
        assert_eq!(moving_slots(""), Vec::<u16>::new());
    }

    #[test]
    fn owned_ranges_of_this_node() {
        let nodes = "\
a1 127.0.0.1:7001@17001 master - 0 0 1 connected 0-5460 [93->-b2]
b2 127.0.0.1:7002@17002 myself,master - 0 0 2 connected 5461-10921 10922 [93-<-a1]
";
        let owned = owned_slots(nodes);
        assert_eq!(owned, vec![(5461, 10921), (10922, 10922)]);
        assert!(within(&owned, 10922) && within(&owned, 5461));
        assert!(!within(&owned, 93) && !within(&owned, 10923));
        assert_eq!(
            owned_slots("x 1:1@2 myself,slave a1 0 0 1 connected\n"),
            vec![]
        );
    }

    #[test]
    fn only_migrations_under_way_count() {
        let entries = [
            ("0-9 20-29", "snapshotting"),
            ("100-100", "success"),
            ("200-201", "failed"),
            ("300-300", "cancelled"),
            ("400-400", "waiting-to-pause"),
        ];
        assert_eq!(migrating_slots(entries), vec![(0, 9), (20, 29), (400, 400)]);
    }
}
