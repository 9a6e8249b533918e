//! On a cluster node, what a tick reads of the cluster (one `CLUSTER NODES`, and on Valkey 9 one
//! `CLUSTER GETSLOTMIGRATIONS`) to know the slots it leaves alone; [`slots`] parses it.

use valkey_module::{Context, ValkeyValue};

use super::slots;

/// On a cluster node, the slots a tick leaves alone ([`slots`]), from one `CLUSTER NODES` and,
/// on Valkey 9, one `CLUSTER GETSLOTMIGRATIONS` (an error on Valkey 8: no atomic migration).
pub struct Unsettled {
    /// Moving the legacy way (this node's markers).
    legacy: Vec<u16>,
    /// This node's slots; `None` when `CLUSTER NODES` could not be read (nothing is skipped
    /// for want of it).
    owned: Option<Vec<(u16, u16)>>,
    /// Moving atomically.
    atomic: Vec<(u16, u16)>,
}

impl Unsettled {
    pub fn read(ctx: &Context) -> Unsettled {
        let nodes = match ctx.call("CLUSTER", &["NODES"]) {
            Ok(ValkeyValue::BulkString(text) | ValkeyValue::SimpleString(text)) => Some(text),
            Ok(ValkeyValue::StringBuffer(bytes)) => {
                Some(String::from_utf8_lossy(&bytes).into_owned())
            }
            _ => None,
        };
        let migrations = match ctx.call("CLUSTER", &["GETSLOTMIGRATIONS"]) {
            Ok(ValkeyValue::Array(entries)) => entries.iter().filter_map(migration).collect(),
            _ => Vec::new(),
        };
        Unsettled {
            legacy: nodes
                .as_deref()
                .map(slots::moving_slots)
                .unwrap_or_default(),
            owned: nodes.as_deref().map(slots::owned_slots),
            atomic: slots::migrating_slots(
                migrations.iter().map(|(r, s)| (r.as_str(), s.as_str())),
            ),
        }
    }

    /// Whether `slot` is moving, either way.
    pub fn moving(&self, slot: u16) -> bool {
        self.legacy.contains(&slot) || slots::within(&self.atomic, slot)
    }

    /// Whether `slot` is known not to be this node's.
    pub fn foreign(&self, slot: u16) -> bool {
        self.owned
            .as_ref()
            .is_some_and(|owned| !slots::within(owned, slot))
    }
}

/// One entry of `CLUSTER GETSLOTMIGRATIONS` (field, value, field, value…): its `slot_ranges`
/// and its `state`.
fn migration(entry: &ValkeyValue) -> Option<(String, String)> {
    let fields = match entry {
        ValkeyValue::Array(fields) => fields,
        _ => return None,
    };
    let text = |value: &ValkeyValue| match value {
        ValkeyValue::BulkString(text) | ValkeyValue::SimpleString(text) => Some(text.clone()),
        ValkeyValue::StringBuffer(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
        _ => None,
    };
    let field = |name: &str| {
        fields
            .chunks(2)
            .find(|pair| text(&pair[0]).as_deref() == Some(name))
            .and_then(|pair| pair.get(1).and_then(text))
    };
    Some((field("slot_ranges")?, field("state")?))
}
