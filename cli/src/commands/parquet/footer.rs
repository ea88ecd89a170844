//! The bounds a Parquet footer meets before the `parquet` crate decodes it.
//!
//! The `parquet` crate's decoder takes a footer's counts at their word: it reserves a list's
//! declared length times its element's size before it reads the first element (424 bytes of
//! `ColumnChunkMetaData` for each byte of footer a column chunk may take), builds the schema
//! tree from each element's `num_children` (reserving that many children, one recursion per
//! level), and copies the path of every leaf column. A failed allocation aborts the process, so
//! a footer of a few bytes could end the command with a signal instead of an error.
//!
//! [`check`] therefore walks the footer first, with a thrift compact-protocol reader that
//! allocates nothing in proportion to what it reads, and refuses it unless:
//!
//! - every list, set, map, string and binary fits in the footer bytes left after its header
//!   (an element takes at least one byte), and values nest at most [`MAX_NESTING`] levels;
//! - every field the `parquet` crate reads has the thrift type `parquet.thrift` gives it, and
//!   appears once: the crate reads a field by its id whatever type the footer declares, so a
//!   field of another type would make it read bytes this walk skipped (or skip bytes this walk
//!   read), and see counts this walk never checked;
//! - the schema's `num_children` describe one tree of exactly its elements, at most
//!   [`MAX_SCHEMA_DEPTH`] levels deep;
//! - what the crate would reserve for the lists it keeps, the schema tree and the leaves'
//!   paths, counted at a generous size per element, stays within [`MAX_DECODED_BYTES`].
//!
//! The footer's own length is checked against the file and [`MAX_FOOTER_BYTES`] by
//! [`footer_len`] before it is read. This module decodes nothing: the `parquet` crate does,
//! once the footer passes. The library's `sbbf::thrift` reads the Bloom filter header; this
//! reader reads the footer, which only the command (through the `parquet` crate) decodes. The
//! Bloom filters' offsets and lengths are checked against the file where they are read.

/// The largest footer read: parquet-mr and pyarrow footers run from kilobytes to a few MiB
/// (the ones of files with thousands of columns and row groups included).
pub const MAX_FOOTER_BYTES: u64 = 64 << 20;

/// The most memory the `parquet` crate may be asked to reserve for one footer, counted as
/// [`Shape::slot`] and [`SchemaTree`] count it (each an upper bound of what the crate takes):
/// room for about 800,000 column chunks.
pub const MAX_DECODED_BYTES: u64 = 512 << 20;

/// How deep thrift values may nest: `parquet.thrift` nests six levels (a row group's column
/// chunk's statistics); the rest is room for fields this reader does not know.
pub const MAX_NESTING: usize = 64;

/// How deep the schema tree may go below its root. The `parquet` crate recurses once per
/// level (building the tree, its leaves, and dropping it); a list of structs of lists is three.
pub const MAX_SCHEMA_DEPTH: usize = 128;

/// The bytes after the footer: its length (u32, little-endian) and the magic `PAR1`.
pub const TAIL_BYTES: u64 = 8;

/// Bytes the crate keeps per path component of each leaf column (a `String`), beyond its name.
const PATH_PART_BYTES: u64 = 32;

// Thrift compact-protocol types.
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;

/// What is wrong with a footer, as the end of the line "FILE: not a readable Parquet file: ...".
pub type Checked<T> = Result<T, String>;

/// The footer's length, from the file's last [`TAIL_BYTES`] bytes, checked against the bytes
/// before them and [`MAX_FOOTER_BYTES`].
pub fn footer_len(tail: [u8; TAIL_BYTES as usize], file_len: u64) -> Checked<u64> {
    match &tail[4..] {
        b"PAR1" => {}
        b"PARE" => return Err("its footer is encrypted, which this command does not read".into()),
        _ => return Err("it does not end with the magic bytes PAR1".into()),
    }
    let len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    let room = file_len - TAIL_BYTES;
    if len > room {
        return Err(format!(
            "its footer length {len} is more than the {room} bytes before it"
        ));
    }
    if len > MAX_FOOTER_BYTES {
        return Err(format!(
            "its footer is {len} bytes long, more than the {MAX_FOOTER_BYTES} this command reads"
        ));
    }
    Ok(len)
}

/// Walks `footer` (the thrift-compact `FileMetaData`) and refuses it unless the `parquet`
/// crate can decode it within the bounds the module documentation lists.
pub fn check(footer: &[u8]) -> Checked<()> {
    let mut walk = Walk {
        footer,
        at: 0,
        reserved: footer.len() as u64,
        leaves: None,
    };
    walk.structure(&FILE_METADATA, 0, None)?;
    if walk.reserved > MAX_DECODED_BYTES {
        return Err(format!(
            "decoding its footer ({} bytes) could take up to {} MiB, more than the {} MiB this \
             command allows",
            footer.len(),
            walk.reserved >> 20,
            MAX_DECODED_BYTES >> 20
        ));
    }
    Ok(())
}

/// What a field holds, as the `parquet` crate reads it.
#[derive(Clone, Copy)]
enum Shape {
    Bool,
    Byte,
    I16,
    I32,
    I64,
    Double,
    Binary,
    Struct(&'static Struct),
    /// A list the crate keeps: it reserves the declared length times the element's slot.
    List(&'static Shape),
    /// `FileMetaData.schema`: a list of `SchemaElement`, and the tree it describes.
    Schema,
    /// `FileMetaData.row_groups`: a list of `RowGroup`; the crate reserves a row group's column
    /// chunks before it reads them.
    RowGroups,
}

impl Shape {
    /// Whether a value of this shape may be declared as compact type `kind`.
    fn declared_as(self, kind: u8) -> bool {
        match self {
            Shape::Bool => kind == BOOL_TRUE || kind == BOOL_FALSE,
            _ => kind == self.compact_type(),
        }
    }

    fn compact_type(self) -> u8 {
        match self {
            Shape::Bool => BOOL_TRUE,
            Shape::Byte => BYTE,
            Shape::I16 => I16,
            Shape::I32 => I32,
            Shape::I64 => I64,
            Shape::Double => DOUBLE,
            Shape::Binary => BINARY,
            Shape::Struct(_) => STRUCT,
            Shape::List(_) | Shape::Schema | Shape::RowGroups => LIST,
        }
    }

    /// Bytes the crate holds for one list element of this shape: at least the size of the
    /// type it decodes the element into (`tests::slots_cover_the_parquet_types` checks the
    /// public ones).
    fn slot(self) -> u64 {
        match self {
            Shape::Struct(s) => s.slot,
            _ => 8,
        }
    }
}

/// A struct of `parquet.thrift`, with the fields the `parquet` crate reads. A field the crate
/// skips is left out: this walk skips it as its declared type says, as the crate does.
struct Struct {
    name: &'static str,
    /// Bytes the crate holds for one element of a list of these.
    slot: u64,
    /// Field ids (all below 64) and what they hold.
    fields: &'static [(i16, Shape)],
}

/// A struct or union the crate reads as empty, or whose fields it skips.
static EMPTY: Struct = Struct {
    name: "empty struct",
    slot: 8,
    fields: &[],
};

static FILE_METADATA: Struct = Struct {
    name: "FileMetaData",
    slot: 0,
    fields: &[
        (1, Shape::I32),
        (2, Shape::Schema),
        (3, Shape::I64),
        (4, Shape::RowGroups),
        (5, Shape::List(&Shape::Struct(&KEY_VALUE))),
        (6, Shape::Binary),
        (7, Shape::List(&Shape::Struct(&EMPTY_UNION))),
    ],
};

/// `ColumnOrder`: a union of empty structs.
static EMPTY_UNION: Struct = Struct {
    name: "ColumnOrder",
    slot: 8,
    fields: &[
        (1, Shape::Struct(&EMPTY)),
        (2, Shape::Struct(&EMPTY)),
        (3, Shape::Struct(&EMPTY)),
    ],
};

/// Its slot covers the element and what the schema tree holds for it: the `SchemaElement`
/// (about 100 bytes), its `Type` node, and a leaf's `ColumnDescriptor`; leaves' paths are
/// counted apart.
static SCHEMA_ELEMENT: Struct = Struct {
    name: "SchemaElement",
    slot: 512,
    fields: &[
        (1, Shape::I32),
        (2, Shape::I32),
        (3, Shape::I32),
        (4, Shape::Binary),
        (5, Shape::I32),
        (6, Shape::I32),
        (7, Shape::I32),
        (8, Shape::I32),
        (9, Shape::I32),
        (10, Shape::Struct(&LOGICAL_TYPE)),
    ],
};

static LOGICAL_TYPE: Struct = Struct {
    name: "LogicalType",
    slot: 64,
    fields: &[
        (1, Shape::Struct(&EMPTY)),
        (2, Shape::Struct(&EMPTY)),
        (3, Shape::Struct(&EMPTY)),
        (4, Shape::Struct(&EMPTY)),
        (5, Shape::Struct(&DECIMAL_TYPE)),
        (6, Shape::Struct(&EMPTY)),
        (7, Shape::Struct(&TIME_TYPE)),
        (8, Shape::Struct(&TIME_TYPE)),
        (10, Shape::Struct(&INT_TYPE)),
        (11, Shape::Struct(&EMPTY)),
        (12, Shape::Struct(&EMPTY)),
        (13, Shape::Struct(&EMPTY)),
        (14, Shape::Struct(&EMPTY)),
        (15, Shape::Struct(&EMPTY)),
        (16, Shape::Struct(&VARIANT_TYPE)),
        (17, Shape::Struct(&GEOMETRY_TYPE)),
        (18, Shape::Struct(&GEOGRAPHY_TYPE)),
        (19, Shape::Struct(&EMPTY)),
    ],
};

static DECIMAL_TYPE: Struct = Struct {
    name: "DecimalType",
    slot: 8,
    fields: &[(1, Shape::I32), (2, Shape::I32)],
};

/// `TimeType` and `TimestampType`.
static TIME_TYPE: Struct = Struct {
    name: "TimestampType",
    slot: 8,
    fields: &[(1, Shape::Bool), (2, Shape::Struct(&TIME_UNIT))],
};

static TIME_UNIT: Struct = Struct {
    name: "TimeUnit",
    slot: 8,
    fields: &[
        (1, Shape::Struct(&EMPTY)),
        (2, Shape::Struct(&EMPTY)),
        (3, Shape::Struct(&EMPTY)),
    ],
};

static INT_TYPE: Struct = Struct {
    name: "IntType",
    slot: 8,
    fields: &[(1, Shape::Byte), (2, Shape::Bool)],
};

static VARIANT_TYPE: Struct = Struct {
    name: "VariantType",
    slot: 8,
    fields: &[(1, Shape::Byte)],
};

static GEOMETRY_TYPE: Struct = Struct {
    name: "GeometryType",
    slot: 32,
    fields: &[(1, Shape::Binary)],
};

static GEOGRAPHY_TYPE: Struct = Struct {
    name: "GeographyType",
    slot: 32,
    fields: &[(1, Shape::Binary), (2, Shape::I32)],
};

static KEY_VALUE: Struct = Struct {
    name: "KeyValue",
    slot: 64,
    fields: &[(1, Shape::Binary), (2, Shape::Binary)],
};

static ROW_GROUP: Struct = Struct {
    name: "RowGroup",
    slot: 128,
    fields: &[
        (1, Shape::List(&Shape::Struct(&COLUMN_CHUNK))),
        (2, Shape::I64),
        (3, Shape::I64),
        (4, Shape::List(&Shape::Struct(&SORTING_COLUMN))),
        (5, Shape::I64),
        (7, Shape::I16),
    ],
};

static SORTING_COLUMN: Struct = Struct {
    name: "SortingColumn",
    slot: 16,
    fields: &[(1, Shape::I32), (2, Shape::Bool), (3, Shape::Bool)],
};

static COLUMN_CHUNK: Struct = Struct {
    name: "ColumnChunk",
    slot: 512,
    fields: &[
        (1, Shape::Binary),
        (2, Shape::I64),
        (3, Shape::Struct(&COLUMN_METADATA)),
        (4, Shape::I64),
        (5, Shape::I32),
        (6, Shape::I64),
        (7, Shape::I32),
    ],
};

static COLUMN_METADATA: Struct = Struct {
    name: "ColumnMetaData",
    slot: 0,
    fields: &[
        (1, Shape::I32),
        (2, Shape::List(&Shape::I32)),
        (4, Shape::I32),
        (5, Shape::I64),
        (6, Shape::I64),
        (7, Shape::I64),
        (9, Shape::I64),
        (10, Shape::I64),
        (11, Shape::I64),
        (12, Shape::Struct(&STATISTICS)),
        (13, Shape::List(&Shape::Struct(&PAGE_ENCODING_STATS))),
        (14, Shape::I64),
        (15, Shape::I32),
        (16, Shape::Struct(&SIZE_STATISTICS)),
        (17, Shape::Struct(&GEOSPATIAL_STATISTICS)),
    ],
};

static STATISTICS: Struct = Struct {
    name: "Statistics",
    slot: 0,
    fields: &[
        (1, Shape::Binary),
        (2, Shape::Binary),
        (3, Shape::I64),
        (4, Shape::I64),
        (5, Shape::Binary),
        (6, Shape::Binary),
        (7, Shape::Bool),
        (8, Shape::Bool),
        (9, Shape::I64),
    ],
};

static PAGE_ENCODING_STATS: Struct = Struct {
    name: "PageEncodingStats",
    slot: 16,
    fields: &[(1, Shape::I32), (2, Shape::I32), (3, Shape::I32)],
};

static SIZE_STATISTICS: Struct = Struct {
    name: "SizeStatistics",
    slot: 0,
    fields: &[
        (1, Shape::I64),
        (2, Shape::List(&Shape::I64)),
        (3, Shape::List(&Shape::I64)),
    ],
};

static GEOSPATIAL_STATISTICS: Struct = Struct {
    name: "GeospatialStatistics",
    slot: 0,
    fields: &[
        (1, Shape::Struct(&BOUNDING_BOX)),
        (2, Shape::List(&Shape::I32)),
    ],
};

static BOUNDING_BOX: Struct = Struct {
    name: "BoundingBox",
    slot: 0,
    fields: &[
        (1, Shape::Double),
        (2, Shape::Double),
        (3, Shape::Double),
        (4, Shape::Double),
        (5, Shape::Double),
        (6, Shape::Double),
        (7, Shape::Double),
        (8, Shape::Double),
    ],
};

/// What the schema check needs of one `SchemaElement`.
#[derive(Default)]
struct ElementFacts {
    /// Field 1 (`type`) is present: with no children, a leaf column.
    typed: bool,
    /// Bytes of field 4 (`name`).
    name_len: u64,
    /// Field 5, as the crate reads it (an `i32`, truncated from the varint).
    num_children: Option<i32>,
}

/// The schema tree as its elements arrive, checked as the `parquet` crate will build it
/// (depth first, each group followed by its `num_children` children), in memory bounded by
/// [`MAX_SCHEMA_DEPTH`] whatever the counts say.
struct SchemaTree {
    elements: u64,
    next: u64,
    /// The groups still open, from the root down: children still to come, and the bytes of
    /// the crate's path to the group (the root's name is not part of a path).
    open: Vec<(u64, u64)>,
    leaves: u64,
    path_bytes: u64,
}

impl SchemaTree {
    fn new(elements: u64) -> Self {
        SchemaTree {
            elements,
            next: 0,
            open: Vec::with_capacity(MAX_SCHEMA_DEPTH),
            leaves: 0,
            path_bytes: 0,
        }
    }

    fn element(&mut self, e: ElementFacts) -> Checked<()> {
        let i = self.next;
        self.next += 1;
        let after = self.elements - i - 1;
        let children = e.num_children.unwrap_or(0);
        let children = u64::try_from(children)
            .map_err(|_| format!("schema element {i} has num_children {children}"))?;
        if children > after {
            return Err(format!(
                "schema element {i} has num_children {children}, but {after} elements follow it"
            ));
        }
        let path = if i == 0 {
            0
        } else {
            let Some(parent) = self.open.last_mut() else {
                return Err(format!(
                    "schema element {i} follows the whole tree under element 0 (a second root)"
                ));
            };
            parent.0 -= 1;
            parent.1 + e.name_len + PATH_PART_BYTES
        };
        if children > 0 {
            if self.open.len() >= MAX_SCHEMA_DEPTH {
                return Err(format!(
                    "schema element {i} has children deeper than {MAX_SCHEMA_DEPTH} levels"
                ));
            }
            self.open.push((children, path));
        } else if i > 0 && e.typed {
            self.leaves += 1;
            self.path_bytes += path;
        }
        while self.open.last().is_some_and(|&(left, _)| left == 0) {
            self.open.pop();
        }
        Ok(())
    }

    /// The number of leaf columns and the bytes of their paths, once every element is in.
    fn finish(self) -> Checked<(u64, u64)> {
        if self.elements == 0 {
            return Err("its schema has no elements".into());
        }
        let missing: u64 = self.open.iter().map(|&(left, _)| left).sum();
        if missing > 0 {
            return Err(format!(
                "its schema's {} elements end with {missing} children still to come",
                self.elements
            ));
        }
        Ok((self.leaves, self.path_bytes))
    }
}

/// One pass over the footer.
struct Walk<'a> {
    footer: &'a [u8],
    at: usize,
    /// What the `parquet` crate would reserve, as far as read.
    reserved: u64,
    /// The number of leaf columns, once the schema is read.
    leaves: Option<u64>,
}

impl Walk<'_> {
    fn left(&self) -> u64 {
        (self.footer.len() - self.at) as u64
    }

    fn byte(&mut self) -> Checked<u8> {
        let b = *self
            .footer
            .get(self.at)
            .ok_or_else(|| format!("its footer ends inside a value ({} bytes)", self.at))?;
        self.at += 1;
        Ok(b)
    }

    fn take(&mut self, n: u64) -> Checked<()> {
        if n > self.left() {
            return Err(format!(
                "footer byte {}: a value of {n} bytes with {} bytes left",
                self.at,
                self.left()
            ));
        }
        self.at += n as usize;
        Ok(())
    }

    /// An unsigned LEB128 varint of at most 10 bytes (the crate reads longer ones; none is
    /// valid).
    fn varint(&mut self) -> Checked<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(format!(
            "footer byte {}: a varint longer than 10 bytes",
            self.at
        ))
    }

    fn zigzag(&mut self) -> Checked<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn nest(&self, depth: usize) -> Checked<()> {
        if depth > MAX_NESTING {
            return Err(format!(
                "footer byte {}: values nested deeper than {MAX_NESTING} levels",
                self.at
            ));
        }
        Ok(())
    }

    /// The next field's id and compact type, or `None` at the struct's stop (a zero type, as
    /// the crate reads it). `last` is the previous field's id, which a short header adds to.
    fn field(&mut self, last: &mut i16) -> Checked<Option<(i16, u8)>> {
        let at = self.at;
        let b = self.byte()?;
        let (delta, kind) = (b >> 4, b & 0x0f);
        if kind == 0 {
            return Ok(None);
        }
        let id = if delta == 0 {
            i16::try_from(self.zigzag()?).ok()
        } else {
            last.checked_add(i16::from(delta))
        };
        *last = id.ok_or_else(|| format!("footer byte {at}: a field id out of range"))?;
        Ok(Some((*last, kind)))
    }

    /// A list's or set's length and element type; the length fits in the bytes left, one
    /// byte an element. A zero header is an empty list (some writers write it), as the crate
    /// reads it.
    fn list_header(&mut self) -> Checked<(u64, u8)> {
        let at = self.at;
        let b = self.byte()?;
        let (short, kind) = (b >> 4, b & 0x0f);
        let len = if short == 15 {
            self.varint()?
        } else {
            u64::from(short)
        };
        if len > self.left() {
            return Err(format!(
                "footer byte {at}: a list of {len} elements with {} bytes left",
                self.left()
            ));
        }
        Ok((len, kind))
    }

    fn reserve(&mut self, count: u64, slot: u64) {
        self.reserved = self.reserved.saturating_add(count.saturating_mul(slot));
    }

    /// A struct of a known kind: its known fields checked and read, the others skipped.
    /// `facts` collects what the schema check needs of a `SchemaElement`.
    fn structure(
        &mut self,
        def: &Struct,
        depth: usize,
        mut facts: Option<&mut ElementFacts>,
    ) -> Checked<()> {
        self.nest(depth)?;
        let mut seen = 0u64;
        let mut id = 0i16;
        while let Some((field, kind)) = self.field(&mut id)? {
            let Some(&(_, shape)) = def.fields.iter().find(|&&(f, _)| f == field) else {
                self.skip(kind, depth + 1)?;
                continue;
            };
            let bit = 1u64 << field;
            if seen & bit != 0 {
                return Err(format!(
                    "footer byte {}: field {field} of a {} appears twice",
                    self.at, def.name
                ));
            }
            seen |= bit;
            if !shape.declared_as(kind) {
                return Err(format!(
                    "footer byte {}: field {field} of a {} has thrift type {kind}, not {}",
                    self.at,
                    def.name,
                    shape.compact_type()
                ));
            }
            let value = self.value(shape, depth + 1)?;
            if let Some(facts) = facts.as_deref_mut() {
                match field {
                    1 => facts.typed = true,
                    4 => facts.name_len = value as u64,
                    // The crate's `read_i32`: the zigzag value, truncated.
                    5 => facts.num_children = Some(value as i32),
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// One value of a known shape; an integer's value or a binary's length, else 0.
    fn value(&mut self, shape: Shape, depth: usize) -> Checked<i64> {
        match shape {
            // In a field the type carries the value.
            Shape::Bool => Ok(0),
            Shape::Byte => self.take(1).map(|()| 0),
            Shape::I16 | Shape::I32 | Shape::I64 => self.zigzag(),
            Shape::Double => self.take(8).map(|()| 0),
            Shape::Binary => {
                let len = self.varint()?;
                self.take(len)?;
                // At most the footer's length.
                Ok(len as i64)
            }
            Shape::Struct(def) => self.structure(def, depth, None).map(|()| 0),
            Shape::List(element) => self.list(*element, depth, 0).map(|()| 0),
            Shape::Schema => self.schema(depth).map(|()| 0),
            Shape::RowGroups => {
                // A row group reserves its column chunks before reading them; one that fails
                // holds them until it does.
                let columns = self.leaves.unwrap_or(0).saturating_mul(COLUMN_CHUNK.slot);
                self.list(Shape::Struct(&ROW_GROUP), depth, columns)
                    .map(|()| 0)
            }
        }
    }

    /// A list of `element`s; `transient` more bytes are reserved unless it is empty.
    fn list(&mut self, element: Shape, depth: usize, transient: u64) -> Checked<()> {
        self.nest(depth)?;
        let at = self.at;
        let (len, kind) = self.list_header()?;
        if len == 0 {
            return Ok(());
        }
        if kind != element.compact_type() {
            return Err(format!(
                "footer byte {at}: a list of thrift type {kind} where {} is expected",
                element.compact_type()
            ));
        }
        self.reserve(len, element.slot());
        self.reserve(1, transient);
        for _ in 0..len {
            self.value(element, depth + 1)?;
        }
        Ok(())
    }

    fn schema(&mut self, depth: usize) -> Checked<()> {
        self.nest(depth)?;
        let at = self.at;
        let (len, kind) = self.list_header()?;
        if len > 0 && kind != STRUCT {
            return Err(format!(
                "footer byte {at}: a schema of thrift type {kind}, not structs"
            ));
        }
        self.reserve(len, SCHEMA_ELEMENT.slot);
        let mut tree = SchemaTree::new(len);
        for _ in 0..len {
            let mut facts = ElementFacts::default();
            self.structure(&SCHEMA_ELEMENT, depth + 1, Some(&mut facts))?;
            tree.element(facts)?;
        }
        let (leaves, path_bytes) = tree.finish()?;
        self.reserved = self.reserved.saturating_add(path_bytes);
        self.leaves = Some(leaves);
        Ok(())
    }

    /// Skips one value of a field this walk does not know, as its compact type says.
    fn skip(&mut self, kind: u8, depth: usize) -> Checked<()> {
        self.nest(depth)?;
        match kind {
            BOOL_TRUE | BOOL_FALSE => Ok(()),
            BYTE => self.take(1),
            I16 | I32 | I64 => self.varint().map(drop),
            DOUBLE => self.take(8),
            BINARY => {
                let len = self.varint()?;
                self.take(len)
            }
            LIST | SET => {
                let (len, element) = self.list_header()?;
                self.skip_elements(len, &[element], depth)
            }
            MAP => {
                let at = self.at;
                let len = self.varint()?;
                if len == 0 {
                    return Ok(());
                }
                if len > self.left() {
                    return Err(format!(
                        "footer byte {at}: a map of {len} entries with {} bytes left",
                        self.left()
                    ));
                }
                let b = self.byte()?;
                self.skip_elements(len, &[b >> 4, b & 0x0f], depth)
            }
            STRUCT => {
                let mut id = 0;
                while let Some((_, k)) = self.field(&mut id)? {
                    self.skip(k, depth + 1)?;
                }
                Ok(())
            }
            other => Err(format!(
                "footer byte {}: unknown thrift compact type {other}",
                self.at
            )),
        }
    }

    /// `len` elements of a list, set or map, each one value of each of `kinds`.
    fn skip_elements(&mut self, len: u64, kinds: &[u8], depth: usize) -> Checked<()> {
        if len == 0 {
            return Ok(());
        }
        // A boolean element is a byte, which the crate's skip does not read: it would take
        // the next element for a field header.
        if kinds.iter().any(|&k| k == BOOL_TRUE || k == BOOL_FALSE) {
            return Err(format!(
                "footer byte {}: a list or map of booleans in a field parquet.thrift does not \
                 define",
                self.at
            ));
        }
        for _ in 0..len {
            for &kind in kinds {
                self.skip(kind, depth + 1)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_cover_the_parquet_types() {
        use parquet::file::metadata::{ColumnChunkMetaData, KeyValue, RowGroupMetaData};
        use std::mem::size_of;
        assert!(size_of::<ColumnChunkMetaData>() as u64 <= COLUMN_CHUNK.slot);
        assert!(size_of::<RowGroupMetaData>() as u64 <= ROW_GROUP.slot);
        assert!(size_of::<KeyValue>() as u64 <= KEY_VALUE.slot);
        assert!(size_of::<parquet::file::metadata::SortingColumn>() as u64 <= SORTING_COLUMN.slot);
        assert!(size_of::<parquet::basic::ColumnOrder>() as u64 <= EMPTY_UNION.slot);
        // A schema element's slot holds its `Type` node and a leaf's descriptor too.
        let tree = size_of::<parquet::schema::types::Type>()
            + size_of::<parquet::schema::types::ColumnDescriptor>()
            + 64;
        assert!(tree as u64 <= SCHEMA_ELEMENT.slot);
    }

    #[test]
    fn every_known_field_id_fits_the_seen_mask() {
        for def in [
            &FILE_METADATA,
            &EMPTY_UNION,
            &SCHEMA_ELEMENT,
            &LOGICAL_TYPE,
            &DECIMAL_TYPE,
            &TIME_TYPE,
            &TIME_UNIT,
            &INT_TYPE,
            &VARIANT_TYPE,
            &GEOMETRY_TYPE,
            &GEOGRAPHY_TYPE,
            &KEY_VALUE,
            &ROW_GROUP,
            &SORTING_COLUMN,
            &COLUMN_CHUNK,
            &COLUMN_METADATA,
            &STATISTICS,
            &PAGE_ENCODING_STATS,
            &SIZE_STATISTICS,
            &GEOSPATIAL_STATISTICS,
            &BOUNDING_BOX,
        ] {
            assert!(
                def.fields.iter().all(|&(id, _)| (1..64).contains(&id)),
                "{}",
                def.name
            );
        }
    }

    #[test]
    fn the_tail_is_checked_against_the_file() {
        let tail = |len: u32, magic: &[u8; 4]| {
            let mut t = [0u8; 8];
            t[..4].copy_from_slice(&len.to_le_bytes());
            t[4..].copy_from_slice(magic);
            t
        };
        assert_eq!(footer_len(tail(10, b"PAR1"), 18), Ok(10));
        assert!(footer_len(tail(11, b"PAR1"), 18).is_err());
        assert!(footer_len(tail(u32::MAX, b"PAR1"), u64::MAX).is_err());
        assert!(footer_len(tail(10, b"PARE"), 100).is_err());
        assert!(footer_len(tail(10, b"PAR2"), 100).is_err());
    }

    /// A schema of `elements` with the given `num_children` (all typed, named "c").
    fn tree(children: &[i32]) -> Checked<(u64, u64)> {
        let mut t = SchemaTree::new(children.len() as u64);
        for &n in children {
            t.element(ElementFacts {
                typed: true,
                name_len: 1,
                num_children: Some(n),
            })?;
        }
        t.finish()
    }

    #[test]
    fn the_schema_tree_must_add_up() {
        assert_eq!(tree(&[2, 0, 0]).map(|t| t.0), Ok(2));
        assert_eq!(tree(&[2, 1, 0, 0]).map(|t| t.0), Ok(2));
        assert_eq!(tree(&[0]).map(|t| t.0), Ok(0));
        assert!(tree(&[]).is_err());
        assert!(tree(&[i32::MAX, 0]).is_err());
        assert!(tree(&[-1, 0]).is_err());
        assert!(tree(&[3, 0, 0]).is_err());
        assert!(tree(&[1, 0, 0]).is_err());
        assert!(tree(&[0, 0]).is_err());
        assert!(tree(&[2, 1, 1, 0]).is_err());
        let mut chain = vec![1; MAX_SCHEMA_DEPTH];
        chain.push(0);
        assert_eq!(tree(&chain).map(|t| t.0), Ok(1));
        let mut deeper = vec![1; MAX_SCHEMA_DEPTH + 1];
        deeper.push(0);
        assert!(tree(&deeper).is_err());
    }
}
