//! Arrays and variable attributes: what `a=(x y)`, `declare -A m`, `declare -r`, `declare -i`
//! and friends store beside the plain string variables.
//!
//! An associative array lists its keys in the order bash does, because agents print them
//! without sorting (`for k in "${!m[@]}"`): bash keeps them in a hash table of 1,024 buckets
//! hashed with 32-bit FNV-1, each new key at the head of its bucket, and quadruples the table
//! when it holds twice as many keys as buckets, re-inserting bucket by bucket. [`Assoc`]
//! keeps the same buckets, so `${!m[@]}` comes out as bash prints it.

use std::collections::{BTreeMap, HashMap};

/// An indexed or associative array.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Array {
    Indexed(BTreeMap<usize, String>),
    Assoc(Assoc),
}

impl Array {
    pub(crate) fn indexed(values: impl IntoIterator<Item = String>) -> Self {
        Array::Indexed(values.into_iter().enumerate().collect())
    }

    pub(crate) fn is_assoc(&self) -> bool {
        matches!(self, Array::Assoc(_))
    }

    /// The element for a key already resolved to text (an assoc key) or an index.
    pub(crate) fn get(&self, key: &Key) -> Option<&String> {
        match (self, key) {
            (Array::Indexed(map), Key::Index(i)) => map.get(i),
            (Array::Assoc(assoc), Key::Name(name)) => assoc.get(name),
            _ => None,
        }
    }

    pub(crate) fn set(&mut self, key: Key, value: String) {
        match (self, key) {
            (Array::Indexed(map), Key::Index(i)) => {
                map.insert(i, value);
            }
            (Array::Assoc(assoc), Key::Name(name)) => assoc.insert(name, value),
            _ => {}
        }
    }

    pub(crate) fn remove(&mut self, key: &Key) {
        match (self, key) {
            (Array::Indexed(map), Key::Index(i)) => {
                map.remove(i);
            }
            (Array::Assoc(assoc), Key::Name(name)) => assoc.remove(name),
            _ => {}
        }
    }

    /// The values, in index order or bash's key order.
    pub(crate) fn values(&self) -> Vec<String> {
        match self {
            Array::Indexed(map) => map.values().cloned().collect(),
            Array::Assoc(assoc) => assoc
                .keys()
                .map(|k| assoc.get(k).cloned().unwrap_or_default())
                .collect(),
        }
    }

    /// The keys (`${!a[@]}`).
    pub(crate) fn keys(&self) -> Vec<String> {
        match self {
            Array::Indexed(map) => map.keys().map(usize::to_string).collect(),
            Array::Assoc(assoc) => assoc.keys().map(str::to_string).collect(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Array::Indexed(map) => map.len(),
            Array::Assoc(assoc) => assoc.values.len(),
        }
    }

    /// One past the highest index (where `a+=(x)` appends).
    pub(crate) fn next_index(&self) -> usize {
        match self {
            Array::Indexed(map) => map.keys().next_back().map_or(0, |i| i + 1),
            Array::Assoc(_) => 0,
        }
    }
}

/// A subscript resolved against its array: an index of an indexed array (negative ones
/// already counted from the end) or a key of an associative one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Key {
    Index(usize),
    Name(String),
}

const INITIAL_BUCKETS: usize = 1024;

/// An associative array with bash's iteration order (see the module comment).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Assoc {
    values: HashMap<String, String>,
    /// Each bucket's keys, the head (newest) last; empty until the first insert.
    buckets: Vec<Vec<String>>,
}

/// Bash's `hash_string`: 32-bit FNV-1.
fn fnv1(key: &str) -> u32 {
    key.bytes().fold(2_166_136_261u32, |hash, byte| {
        hash.wrapping_mul(16_777_619) ^ u32::from(byte)
    })
}

impl Assoc {
    pub(crate) fn get(&self, key: &str) -> Option<&String> {
        self.values.get(key)
    }

    fn bucket(&self, key: &str) -> usize {
        fnv1(key) as usize & (self.buckets.len() - 1)
    }

    pub(crate) fn insert(&mut self, key: String, value: String) {
        if let Some(slot) = self.values.get_mut(&key) {
            *slot = value;
            return;
        }
        if self.buckets.is_empty() {
            self.buckets = vec![Vec::new(); INITIAL_BUCKETS];
        }
        if self.values.len() >= self.buckets.len() * 2 {
            let old = std::mem::take(&mut self.buckets);
            self.buckets = vec![Vec::new(); old.len() * 4];
            for bucket in old {
                for key in bucket.into_iter().rev() {
                    let index = self.bucket(&key);
                    self.buckets[index].push(key);
                }
            }
        }
        let index = self.bucket(&key);
        self.buckets[index].push(key.clone());
        self.values.insert(key, value);
    }

    pub(crate) fn remove(&mut self, key: &str) {
        if self.values.remove(key).is_some() {
            let index = self.bucket(key);
            self.buckets[index].retain(|k| k != key);
        }
    }

    /// Keys in bash's order: bucket by bucket, newest first within a bucket.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.buckets
            .iter()
            .flat_map(|bucket| bucket.iter().rev().map(String::as_str))
    }
}

/// What `declare` can say of a variable besides its value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Attributes {
    pub readonly: bool,
    /// `-i`: assignments are evaluated as arithmetic.
    pub integer: bool,
    /// `-l` / `-u`: assignments are folded to lower or upper case.
    pub lower: bool,
    pub upper: bool,
    pub exported: bool,
}

impl Attributes {
    pub(crate) fn is_empty(&self) -> bool {
        *self == Attributes::default()
    }

    /// Applies the case attributes to a value being assigned.
    pub(crate) fn fold(&self, value: String) -> String {
        if self.lower {
            value.to_lowercase()
        } else if self.upper {
            value.to_uppercase()
        } else {
            value
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Orders printed by bash 5.2 for these insertions (`echo "${!m[@]}"`).
    #[test]
    fn assoc_keys_come_out_in_bash_order() {
        let mut assoc = Assoc::default();
        for key in "apple banana cherry date elderberry fig grape a b c d e f g h".split(' ') {
            assoc.insert(key.into(), "1".into());
        }
        let keys: Vec<&str> = assoc.keys().collect();
        assert_eq!(
            keys.join(" "),
            "cherry grape h g f e d c b a elderberry apple fig date banana"
        );
        assoc.remove("h");
        assoc.insert("cherry".into(), "2".into());
        let keys: Vec<&str> = assoc.keys().collect();
        assert_eq!(
            keys.join(" "),
            "cherry grape g f e d c b a elderberry apple fig date banana"
        );
    }

    #[test]
    fn assoc_order_survives_growth() {
        let mut assoc = Assoc::default();
        for i in 0..3000 {
            assoc.insert(format!("k{i}"), String::new());
        }
        let keys: Vec<&str> = assoc.keys().take(5).collect();
        // bash: declare -A m; for ((i=0;i<3000;i++)); do m[k$i]=; done; echo "${!m[@]}"
        assert_eq!(keys, ["k1698", "k1699", "k1696", "k1697", "k1694"]);
        assert_eq!(assoc.values.len(), 3000);
    }
}
