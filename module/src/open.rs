//! The first steps every job-core verb runs — shape → layout → fence ([`open`]) — and the
//! call's arguments as bytes ([`argv`]). Shape and fence live in their own modules; the layout
//! step is here.

use valkey_module::Context;

use crate::direct::Args;
use crate::errors::{self, Refusal};
use crate::fence;
use crate::keyspace::Queue;
use crate::shape::{self, Call, Form, Slot};

/// The most arguments kept without a heap allocation (every form has fewer).
const INLINE_ARGS: usize = 20;

/// The arguments after the command name, as bytes (inline on the stack: no allocation).
#[allow(clippy::large_enum_variant)]
pub enum Argv<'a> {
    Inline([&'a [u8]; INLINE_ARGS], usize),
    Heap(Vec<&'a [u8]>),
}

impl<'a> std::ops::Deref for Argv<'a> {
    type Target = [&'a [u8]];

    fn deref(&self) -> &Self::Target {
        match self {
            Argv::Inline(items, n) => &items[..*n],
            Argv::Heap(items) => items,
        }
    }
}

/// The arguments after the command name, as bytes.
pub fn argv(args: Args<'_>) -> Argv<'_> {
    let n = args.len().saturating_sub(1);
    if n > INLINE_ARGS {
        return Argv::Heap((1..args.len()).map(|i| args.bytes(i)).collect());
    }
    let mut items: [&[u8]; INLINE_ARGS] = [&[]; INLINE_ARGS];
    for (i, slot) in items.iter_mut().enumerate().take(n) {
        *slot = args.bytes(i + 1);
    }
    Argv::Inline(items, n)
}

/// Shape → layout → fence: the call split by `form`, and the queue its keys name.
pub fn open<'a>(
    ctx: &Context,
    form: &Form,
    argv: &'a [&'a [u8]],
) -> Result<(Call<'a>, Queue<'a>), Refusal> {
    let call = shape::split(form, argv)?;
    let queue = layout(form, &call)?;
    fence::check(ctx)?;
    Ok((call, queue))
}

/// Layout: one queue name recovered from the anchor key; every other declared key (the row
/// included, for the id given as the first value) rebuilt from that name and compared byte for
/// byte. Refusal: `ERR EMQ.<VERB> keys do not match the wire-4 layout`.
pub fn layout<'a>(form: &Form, call: &Call<'a>) -> Result<Queue<'a>, Refusal> {
    let refused = || errors::layout(form.verb);
    let Slot::Key(kind) = form.keys[form.anchor] else {
        return Err(refused());
    };
    let queue = Queue::from_key(call.keys[form.anchor], kind).ok_or_else(refused)?;
    let rebuilt = form
        .keys
        .iter()
        .zip(call.keys)
        .all(|(slot, key)| match slot {
            Slot::Key(kind) => queue.is(key, kind),
            Slot::Row => call.values.first().is_some_and(|id| queue.is_job(key, id)),
            Slot::Version => false,
        });
    rebuilt.then_some(queue).ok_or_else(refused)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::JOB_CORE_FORMS;

    /// The keys of `form` for queue `q` and id `id`.
    fn keys_for(form: &Form, q: &str, id: &str) -> Vec<Vec<u8>> {
        form.keys
            .iter()
            .map(|slot| {
                // Any name, valid or not: the keys as the data's base writes them.
                use crate::keyspace::{CLOSE, PREFIX, ROW, VERSION_KEY};
                let q = q.as_bytes();
                match slot {
                    Slot::Row => [PREFIX, q, CLOSE, ROW, id.as_bytes()].concat(),
                    Slot::Key(kind) => [PREFIX, q, CLOSE, kind].concat(),
                    Slot::Version => VERSION_KEY.to_vec(),
                }
            })
            .collect()
    }

    fn try_layout(form: &Form, keys: &[Vec<u8>], id: &[u8]) -> Result<Vec<u8>, Refusal> {
        let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let mut values: Vec<&[u8]> = vec![b"x"; form.values];
        if let Some(first) = values.first_mut() {
            *first = id;
        }
        let call = Call {
            keys: &keys,
            values: &values,
        };
        layout(form, &call).map(|queue| queue.name().to_vec())
    }

    #[test]
    fn layout_accepts_the_wire4_keys() {
        for form in JOB_CORE_FORMS {
            let longest = "x".repeat(255);
            for q in ["orders", " a:b~", longest.as_str()] {
                let keys = keys_for(&form, q, "JOB0123456789a");
                assert_eq!(
                    try_layout(&form, &keys, b"JOB0123456789a"),
                    Ok(q.as_bytes().to_vec()),
                    "{}",
                    form.syntax
                );
            }
        }
    }

    #[test]
    fn layout_refuses_any_other_key() {
        for form in JOB_CORE_FORMS {
            let refusal = Err(errors::layout(form.verb));
            let good = keys_for(&form, "orders", "JOB0123456789a");
            for i in 0..good.len() {
                let other_queue = keys_for(&form, "other", "JOB0123456789a");
                if good.len() > 1 {
                    let mut keys = good.clone();
                    keys[i] = other_queue[i].clone();
                    assert_eq!(try_layout(&form, &keys, b"JOB0123456789a"), refusal);
                }
                let mut keys = good.clone();
                keys[i].push(b'x');
                assert_eq!(try_layout(&form, &keys, b"JOB0123456789a"), refusal);
                let mut keys = good.clone();
                keys[i] = crate::keyspace::VERSION_KEY.to_vec();
                assert_eq!(try_layout(&form, &keys, b"JOB0123456789a"), refusal);
            }
            let too_long = "x".repeat(256);
            for q in [
                "",
                "a{b",
                "a}b",
                "a\0b",
                "a\tb",
                "a\x7fb",
                too_long.as_str(),
            ] {
                let keys = keys_for(&form, q, "JOB0123456789a");
                assert_eq!(
                    try_layout(&form, &keys, b"JOB0123456789a"),
                    refusal,
                    "{q:?}"
                );
            }
            if form.keys.contains(&Slot::Row) {
                assert_eq!(try_layout(&form, &good, b"JOB0123456789b"), refusal);
            }
        }
    }
}
