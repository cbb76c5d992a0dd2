//! awk's associative arrays, kept the way mawk keeps them so that `for (k in a)` visits keys
//! in mawk's order — the order of the `awk` that Debian and Ubuntu install, which the
//! sandbox's fidelity suite runs beside it. POSIX leaves that order unspecified, so any order
//! is correct awk; this one makes an agent's unsorted `for (k in count) print k, count[k]`
//! read as it does on such a machine.
//!
//! The layout (from mawk's documented design, `array.w`): an array is empty, a "split" vector
//! (what `split()` makes: elements 1..n), or a hash table of lists whose heads double when the
//! average list grows past 12. A node may be on a string list (keyed by its text, hashed with
//! 32-bit FNV-1) and on an integer list (keyed by an integral subscript); a table starts with
//! one kind and gains the other on demand. Every lookup moves the node it finds to the front
//! of its list, and a loop visits the string lists in table order — so the order depends on
//! the history of lookups, exactly as in mawk.

use super::value::Value;

/// A subscript, after awk's conversion: an integral number within mawk's `Int` range keys by
/// integer, everything else by text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key<'a> {
    Int(i32),
    Str(&'a str),
}

const NIL: u32 = u32::MAX;
const STARTING_HMASK: u32 = 63;
const MAX_AVE_LIST_LENGTH: usize = 12;

fn limit_of(hmask: u32) -> usize {
    (hmask as usize + 1) * MAX_AVE_LIST_LENGTH
}

/// 32-bit FNV-1, mawk's string hash.
fn hash(text: &str) -> u32 {
    let mut h: u32 = 2_166_136_261;
    for byte in text.bytes() {
        h ^= u32::from(byte);
        h = h.wrapping_mul(16_777_619);
    }
    h
}

#[derive(Debug)]
struct Node {
    slink: u32,
    ilink: u32,
    /// The text key, once the table keys by text.
    sval: Option<String>,
    hval: u32,
    ival: Option<i32>,
    value: Value,
}

#[derive(Debug, Default)]
pub struct Array {
    /// A split vector: elements 1..=len, when `table` is `None` and this is non-empty.
    split: Vec<Value>,
    table: Option<Table>,
}

#[derive(Debug)]
struct Table {
    nodes: Vec<Node>,
    free: Vec<u32>,
    slists: Vec<u32>,
    ilists: Vec<u32>,
    by_str: bool,
    by_int: bool,
    hmask: u32,
    size: usize,
}

impl Table {
    fn empty(by_str: bool, by_int: bool) -> Table {
        Table {
            nodes: Vec::new(),
            free: Vec::new(),
            slists: vec![NIL; STARTING_HMASK as usize + 1],
            ilists: vec![NIL; STARTING_HMASK as usize + 1],
            by_str,
            by_int,
            hmask: STARTING_HMASK,
            size: 0,
        }
    }

    fn alloc(&mut self, node: Node) -> u32 {
        match self.free.pop() {
            Some(index) => {
                self.nodes[index as usize] = node;
                index
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    /// Counts a new node; doubles the lists when the average list is too long.
    fn grow(&mut self) {
        self.size += 1;
        if self.size > limit_of(self.hmask) {
            self.double();
        }
    }

    fn double(&mut self) {
        let old = self.hmask;
        let new = (old << 1) + 1;
        self.slists.resize(new as usize + 1, NIL);
        self.ilists.resize(new as usize + 1, NIL);
        for i in 0..=old {
            let j = i + old + 1;
            if self.by_str {
                let (stay, moved) = self.partition(self.slists[i as usize], true, new, i);
                self.slists[i as usize] = stay;
                self.slists[j as usize] = moved;
            }
            if self.by_int {
                let (stay, moved) = self.partition(self.ilists[i as usize], false, new, i);
                self.ilists[i as usize] = stay;
                self.ilists[j as usize] = moved;
            }
        }
        self.hmask = new;
    }

    /// Splits the list from `head` into the nodes that stay at index `i` under `mask` and
    /// those that move, each keeping its order.
    fn partition(&mut self, head: u32, strings: bool, mask: u32, i: u32) -> (u32, u32) {
        let mut stay = Vec::new();
        let mut moved = Vec::new();
        let mut p = head;
        while p != NIL {
            let node = &self.nodes[p as usize];
            let (key, next) = if strings {
                (node.hval, node.slink)
            } else {
                (node.ival.unwrap_or(0) as u32, node.ilink)
            };
            if key & mask == i {
                stay.push(p);
            } else {
                moved.push(p);
            }
            p = next;
        }
        (self.chain(&stay, strings), self.chain(&moved, strings))
    }

    /// Links `nodes` into one list in the given order; returns its head.
    fn chain(&mut self, nodes: &[u32], strings: bool) -> u32 {
        let mut head = NIL;
        for &n in nodes.iter().rev() {
            let node = &mut self.nodes[n as usize];
            if strings {
                node.slink = head;
            } else {
                node.ilink = head;
            }
            head = n;
        }
        head
    }

    /// Finds `text` on its string list, moving it to the front; creates it there if asked.
    fn find_str(&mut self, text: &str, create: bool) -> Option<u32> {
        if !self.by_str {
            self.add_string_keys();
        }
        let hval = hash(text);
        let mut index = (hval & self.hmask) as usize;
        let mut p = self.slists[index];
        let mut q = NIL;
        while p != NIL {
            let node = &self.nodes[p as usize];
            if node.hval == hval && node.sval.as_deref() == Some(text) {
                if q == NIL {
                    return Some(p);
                }
                let next = node.slink;
                self.nodes[q as usize].slink = next;
                break;
            }
            q = p;
            p = node.slink;
        }
        if p == NIL {
            if !create {
                return None;
            }
            p = self.alloc(Node {
                slink: NIL,
                ilink: NIL,
                sval: Some(text.to_string()),
                hval,
                ival: None,
                value: Value::Uninit,
            });
            self.grow();
            index = (hval & self.hmask) as usize;
        }
        self.nodes[p as usize].slink = self.slists[index];
        self.slists[index] = p;
        Some(p)
    }

    /// Finds the integer key `ival` on its integer list (or, failing that, by its text),
    /// moving it to the front; creates it if asked.
    fn find_int(&mut self, ival: i32, create: bool) -> Option<u32> {
        let mut index = (ival as u32 & self.hmask) as usize;
        let mut p = self.ilists[index];
        let mut q = NIL;
        while p != NIL {
            let node = &self.nodes[p as usize];
            if node.ival == Some(ival) {
                if q == NIL {
                    return Some(p);
                }
                let next = node.ilink;
                self.nodes[q as usize].ilink = next;
                break;
            }
            q = p;
            p = node.ilink;
        }
        if p == NIL {
            if self.by_str {
                p = self.find_str(&ival.to_string(), create)?;
            } else if create {
                p = self.alloc(Node {
                    slink: NIL,
                    ilink: NIL,
                    sval: None,
                    hval: 0,
                    ival: None,
                    value: Value::Uninit,
                });
                self.grow();
            } else {
                return None;
            }
            self.nodes[p as usize].ival = Some(ival);
            self.by_int = true;
            index = (ival as u32 & self.hmask) as usize;
        }
        self.nodes[p as usize].ilink = self.ilists[index];
        self.ilists[index] = p;
        Some(p)
    }

    /// Gives every node a text key on a string list: the table's integer lists in order, each
    /// node pushed onto the front of its string list.
    fn add_string_keys(&mut self) {
        for i in 0..=self.hmask as usize {
            let mut p = self.ilists[i];
            while p != NIL {
                let text = self.nodes[p as usize].ival.unwrap_or(0).to_string();
                let hval = hash(&text);
                let slot = (hval & self.hmask) as usize;
                let node = &mut self.nodes[p as usize];
                node.sval = Some(text);
                node.hval = hval;
                node.slink = self.slists[slot];
                self.slists[slot] = p;
                p = node.ilink;
            }
        }
        self.by_str = true;
    }

    /// Unlinks node `n` from the list whose head is `lists[slot]`.
    fn unlink(&mut self, n: u32, strings: bool) {
        let node = &self.nodes[n as usize];
        let (slot, next) = if strings {
            ((node.hval & self.hmask) as usize, node.slink)
        } else {
            (
                (node.ival.unwrap_or(0) as u32 & self.hmask) as usize,
                node.ilink,
            )
        };
        let lists = if strings {
            &mut self.slists
        } else {
            &mut self.ilists
        };
        if lists[slot] == n {
            lists[slot] = next;
            return;
        }
        let mut p = lists[slot];
        while p != NIL {
            let link = if strings {
                self.nodes[p as usize].slink
            } else {
                self.nodes[p as usize].ilink
            };
            if link == n {
                let node = &mut self.nodes[p as usize];
                if strings {
                    node.slink = next;
                } else {
                    node.ilink = next;
                }
                return;
            }
            p = link;
        }
    }

    fn remove(&mut self, n: u32) {
        if self.nodes[n as usize].sval.is_some() {
            self.unlink(n, true);
        }
        if self.nodes[n as usize].ival.is_some() {
            self.unlink(n, false);
        }
        let node = &mut self.nodes[n as usize];
        node.sval = None;
        node.ival = None;
        node.value = Value::Uninit;
        self.free.push(n);
        self.size -= 1;
    }
}

/// Where an element lives.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Split(usize),
    Node(u32),
}

impl Array {
    pub fn len(&self) -> usize {
        match &self.table {
            Some(table) => table.size,
            None => self.split.len(),
        }
    }

    /// Turns a split vector into an integer-keyed table (elements spread over the lists from
    /// index 1 on), or an empty array into an empty table of the given kind.
    fn table(&mut self, by_str: bool) -> &mut Table {
        if self.table.is_none() {
            let cells = std::mem::take(&mut self.split);
            let mut table = Table::empty(by_str && cells.is_empty(), !cells.is_empty() || !by_str);
            while cells.len() > limit_of(table.hmask) {
                table.hmask = (table.hmask << 1) + 1;
            }
            table.slists = vec![NIL; table.hmask as usize + 1];
            table.ilists = vec![NIL; table.hmask as usize + 1];
            let mut j = 1u32;
            for (i, value) in cells.into_iter().enumerate() {
                let n = table.alloc(Node {
                    slink: NIL,
                    ilink: table.ilists[j as usize],
                    sval: None,
                    hval: 0,
                    ival: Some(i as i32 + 1),
                    value,
                });
                table.ilists[j as usize] = n;
                table.size += 1;
                j = (j + 1) & table.hmask;
            }
            self.table = Some(table);
        }
        self.table.as_mut().expect("just made")
    }

    fn find(&mut self, key: Key, create: bool) -> Option<Slot> {
        if self.len() == 0 && !create {
            return None;
        }
        match key {
            Key::Int(ival) => {
                if self.table.is_none() && !self.split.is_empty() {
                    if ival >= 1 && ival as usize <= self.split.len() {
                        return Some(Slot::Split(ival as usize - 1));
                    }
                    if !create {
                        return None;
                    }
                }
                self.table(false).find_int(ival, create).map(Slot::Node)
            }
            Key::Str(text) => self.table(true).find_str(text, create).map(Slot::Node),
        }
    }

    fn slot_mut(&mut self, slot: Slot) -> &mut Value {
        match slot {
            Slot::Split(i) => &mut self.split[i],
            Slot::Node(n) => &mut self.table.as_mut().expect("a node").nodes[n as usize].value,
        }
    }

    /// The element at `key`, created (uninitialised) if missing, as a reference creates it.
    pub fn entry(&mut self, key: Key) -> &mut Value {
        let slot = self.find(key, true).expect("created");
        self.slot_mut(slot)
    }

    /// Whether `key` is present (`key in a`); creates nothing.
    pub fn contains(&mut self, key: Key) -> bool {
        self.find(key, false).is_some()
    }

    /// `delete a[key]`.
    pub fn remove(&mut self, key: Key) {
        if self.table.is_none() {
            match key {
                _ if self.split.is_empty() => return,
                Key::Int(i) if i < 1 || i as usize > self.split.len() => return,
                _ => {
                    self.table(false);
                }
            }
        }
        if let Some(Slot::Node(n)) = self.find(key, false) {
            let table = self.table.as_mut().expect("a node");
            table.remove(n);
            if table.size == 0 {
                self.clear();
            }
        }
    }

    /// `delete a`.
    pub fn clear(&mut self) {
        self.split.clear();
        self.table = None;
    }

    /// What `split()` leaves: elements 1..=n.
    pub fn load(&mut self, values: Vec<Value>) {
        self.table = None;
        self.split = values;
    }

    /// The keys in `for (k in a)` order.
    pub fn keys(&mut self) -> Vec<String> {
        if self.len() == 0 {
            return Vec::new();
        }
        let table = self.table(true);
        if !table.by_str {
            table.add_string_keys();
        }
        let mut keys = Vec::with_capacity(table.size);
        for &head in &table.slists {
            let mut p = head;
            while p != NIL {
                let node = &table.nodes[p as usize];
                keys.push(node.sval.clone().unwrap_or_default());
                p = node.slink;
            }
        }
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(words: &[&str]) -> Vec<String> {
        let mut array = Array::default();
        for word in words {
            let value = array.entry(Key::Str(word));
            *value = Value::Num(value.number() + 1.0);
        }
        array.keys()
    }

    /// Orders printed by mawk 1.3.4 for the same programs.
    #[test]
    fn keys_come_in_mawks_order() {
        assert_eq!(
            counted(&["b", "a", "c", "10", "9", "b"]),
            ["10", "c", "b", "a", "9"]
        );
        assert_eq!(
            counted(&["apple", "banana", "cherry", "date", "elder", "fig", "grape"]),
            ["grape", "banana", "fig", "date", "elder", "cherry", "apple"]
        );
    }

    #[test]
    fn integer_and_text_keys_name_the_same_element() {
        let mut array = Array::default();
        *array.entry(Key::Int(12)) = Value::Num(1.0);
        assert!(array.contains(Key::Str("12")));
        *array.entry(Key::Str("7")) = Value::Num(2.0);
        assert!(array.contains(Key::Int(7)));
        assert_eq!(array.len(), 2);
        array.remove(Key::Int(7));
        array.remove(Key::Str("12"));
        assert_eq!(array.len(), 0);
        assert!(array.keys().is_empty());
    }

    #[test]
    fn a_split_vector_becomes_a_table_when_needed() {
        let mut array = Array::default();
        array.load((1..=3).map(|n| Value::Num(f64::from(n))).collect());
        assert!(array.contains(Key::Int(2)));
        assert!(!array.contains(Key::Int(4)));
        assert!(array.contains(Key::Str("3")));
        array.remove(Key::Int(1));
        assert_eq!(array.len(), 2);
        let mut keys = array.keys();
        keys.sort();
        assert_eq!(keys, ["2", "3"]);
    }

    #[test]
    fn tables_grow_and_keep_every_key() {
        let mut array = Array::default();
        for i in 0..5000 {
            *array.entry(Key::Int(i)) = Value::Num(f64::from(i));
        }
        for i in 0..5000 {
            *array.entry(Key::Str(&format!("k{i}"))) = Value::Num(1.0);
        }
        assert_eq!(array.len(), 10_000);
        assert_eq!(array.keys().len(), 10_000);
        assert!(array.contains(Key::Int(4999)));
        assert!(array.contains(Key::Str("k0")));
    }
}
