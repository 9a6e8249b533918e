//! On a cluster node: the slots a tick must leave alone — those this node is migrating out or
//! importing (`CLUSTER NODES`, this node's line: `[<slot>->-<node>]`, `[<slot>-<-<node>]`). While
//! a slot moves, its keys are split between two nodes (`MIGRATE` moves them a batch at a time),
//! so a queue there may have its `schedule` here and a row there; a client's command on such a
//! slot is redirected (`ASK`, `TRYAGAIN`) before it runs, a timer's work is not — so the timers
//! wait until the slot has settled. Pure parsing and the key slot (CRC16, as the server computes
//! it); the one server call is the caller's.

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
    let Some(line) = nodes.lines().find(|line| {
        line.split(' ')
            .nth(2)
            .is_some_and(|flags| flags.split(',').any(|f| f == "myself"))
    }) else {
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
}
