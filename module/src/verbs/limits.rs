//! Flow control's verb: `EMQ.LIMIT` (docs/protocol.md, "Flow control"). The claim's limits and
//! the release on leaving `active` are [`crate::limits`]'s.

use valkey_module::{Context, ValkeyValue};

use crate::direct::{Args, Db};
use crate::errors::{self, Refusal, Reply};
use crate::gates;
use crate::guard;
use crate::keyspace::{LIMITS, PARKED};
use crate::limits::LIMITED;
use crate::moves;
use crate::open::{argv, open};
use crate::protocol::limit::{CONCURRENCY, FORM, GROUP, PENDING, RATE_MAX, RATE_MS, SCOPE};

/// The longest group label.
const MAX_GROUP: usize = 255;

/// A group label: 1–255 bytes, none a control character (0x00–0x1F, 0x7F).
fn is_label(g: &[u8]) -> bool {
    (1..=MAX_GROUP).contains(&g.len()) && !g.iter().any(|&b| b < 0x20 || b == 0x7f)
}

/// The scope's fields of `<base>limits` for `concurrency`, `rate_max`, `rate_ms`, and whether
/// the scope writes them (`false`: deletes them).
fn fields(scope: &[u8], group: &[u8]) -> Result<([Vec<u8>; 3], Scope), Refusal> {
    let names: [&[u8]; 3] = [b"concurrency", b"rate_max", b"rate_ms"];
    let (prefix, suffix, scope_is): (&[u8], &[u8], Scope) = match scope {
        b"queue" => (b"", b"", Scope::Zeros),
        b"default" => (b"group_", b"", Scope::Zeros),
        b"group" => (b"", b":", Scope::Set),
        b"ungroup" => (b"", b":", Scope::Clear),
        _ => return Err(errors::limit_scope(FORM.verb)),
    };
    match scope_is {
        Scope::Zeros if !group.is_empty() => return Err(errors::group_not_empty(FORM.verb, scope)),
        Scope::Set | Scope::Clear if !is_label(group) => {
            return Err(errors::group_label(FORM.verb))
        }
        _ => {}
    }
    let g: &[u8] = if suffix.is_empty() { b"" } else { group };
    Ok((names.map(|n| [prefix, n, suffix, g].concat()), scope_is))
}

/// How a scope writes its three fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// `HSET` each, `HDEL` for 0 (`queue`, `default`).
    Zeros,
    /// `HSET` each, 0 included (`group`).
    Set,
    /// `HDEL` each (`ungroup`).
    Clear,
}

/// `EMQ.LIMIT 2 <pending> <base> <scope> <group> <rate_max> <rate_ms> <concurrency>` → the
/// number of parked ids sent back to `pending`.
pub fn limit(ctx: &Context, args: Args) -> Reply {
    let argv = argv(args);
    let (call, queue) = open(ctx, &FORM, &argv)?;
    let guard = guard::writable(ctx, FORM.class);
    let db = Db::new(ctx, args, guard.is_ok());

    let (names, scope) = fields(SCOPE.of(&call), GROUP.of(&call))?;
    let max = RATE_MAX.read(&call)?;
    let ms = RATE_MS.read(&call)?;
    CONCURRENCY.read(&call)?;
    if (max == 0) != (ms == 0) {
        return Err(errors::rate_pair(FORM.verb));
    }
    let values = [CONCURRENCY.of(&call), RATE_MAX.of(&call), RATE_MS.of(&call)];

    let [mut pending, mut parked] =
        gates::sorted_sets(&db, [PENDING.of(&call), &queue.key(PARKED)])?;
    let mut limits = db.open(&queue.key(LIMITS));
    gates::hash(&limits)?;
    let mut meta = db.open(&queue.meta());
    gates::hash(&meta)?;

    guard?;
    for (name, value) in names.iter().zip(values) {
        match scope {
            Scope::Clear => limits.hdel(name).map(drop)?,
            Scope::Zeros if value == b"0" => limits.hdel(name).map(drop)?,
            _ => limits.hset(&[(&name[..], value)])?,
        }
    }
    // The flag every claim reads with the bus's setting: the queue has limits.
    if limits.exists() {
        meta.hset(&[(LIMITED, b"1")])?;
    } else {
        meta.hdel(LIMITED)?;
    }
    drop((limits, meta));
    let mut moved = 0;
    for g in parked.first(usize::MAX)? {
        let mut set = db.open(&queue.group(&g));
        let Ok(ids) = set.first(usize::MAX) else {
            continue;
        };
        for id in ids {
            let score = set.score(&id)?.unwrap_or(0.0);
            moves::add(&mut pending, score as i64, &id)?;
            moved += 1;
        }
        set.delete()?;
    }
    parked.delete()?;
    moves::wake(&db, &queue, moved.max(1));
    Ok(ValkeyValue::Integer(moved))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert!(is_label(b"a"));
        assert!(is_label(&[b'x'; 255]));
        assert!(!is_label(b""));
        assert!(!is_label(&[b'x'; 256]));
        assert!(!is_label(b"a\nb"));
        assert!(!is_label(b"a\x7fb"));
    }

    #[test]
    fn scopes_name_their_fields() {
        let (names, scope) = fields(b"default", b"").unwrap();
        assert_eq!(names[0], b"group_concurrency");
        assert_eq!(scope, Scope::Zeros);
        let (names, _) = fields(b"group", b"g1").unwrap();
        assert_eq!(names[2], b"rate_ms:g1");
        assert!(fields(b"x", b"").is_err());
        assert!(fields(b"queue", b"g").is_err());
        assert!(fields(b"ungroup", b"").is_err());
    }
}
