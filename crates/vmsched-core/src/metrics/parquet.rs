//! The time series as a Parquet file, written without Arrow or pandas.
//!
//! `vmsched run --out` used to load pyarrow (and with it numpy) only to
//! write `timeseries.parquet`: about a tenth of a second of start-up, more
//! than the engine needs for an hour of three CPU hogs. The file's layout is
//! simple enough to write here: one row group, one uncompressed data page
//! (format v1, PLAIN values) per column, and the footer's metadata in
//! Thrift's compact protocol, as the Parquet format specification lays them
//! out. Nullable columns carry definition levels (bit width 1) as one
//! bit-packed run; their values are those of the non-null rows only.
//!
//! Columns and types are those `vmsched.api.series_table` gives the same
//! series: `time_s` double, `domain` UTF-8 string, `vcpu` int32 (null on
//! domain rows), the three shares widened from float32 to double, `executions`
//! uint64, and the domain's I/O counters uint64 (null on VCPU rows). The
//! caller adds key-value metadata (pandas' schema description, so that
//! `pandas.read_parquet` gives back the run's DataFrame as it is).

use super::Series;

/// Thrift compact protocol type codes.
const T_I32: u8 = 5;
const T_I64: u8 = 6;
const T_BINARY: u8 = 8;
const T_LIST: u8 = 9;
const T_STRUCT: u8 = 12;

/// Parquet physical types.
const INT32: i32 = 1;
const INT64: i32 = 2;
const DOUBLE: i32 = 5;
const BYTE_ARRAY: i32 = 6;
/// Parquet converted types.
const UTF8: i32 = 0;
const UINT_64: i32 = 14;
/// Encodings.
const PLAIN: i32 = 0;
const RLE: i32 = 3;

/// A Thrift compact-protocol writer of structs, lists and scalars.
#[derive(Default)]
struct Thrift {
    out: Vec<u8>,
    /// The last field id written in each open struct.
    last: Vec<i16>,
}

impl Thrift {
    fn varint(&mut self, mut x: u64) {
        while x >= 0x80 {
            self.out.push((x as u8) | 0x80);
            x >>= 7;
        }
        self.out.push(x as u8);
    }

    fn zigzag(&mut self, x: i64) {
        self.varint(((x << 1) ^ (x >> 63)) as u64);
    }

    fn field(&mut self, id: i16, kind: u8) {
        let last = self.last.last_mut().expect("inside a struct");
        let delta = id - *last;
        *last = id;
        if (1..=15).contains(&delta) {
            self.out.push(((delta as u8) << 4) | kind);
        } else {
            self.out.push(kind);
            self.zigzag(i64::from(id));
        }
    }

    fn begin(&mut self) {
        self.last.push(0);
    }

    fn end(&mut self) {
        self.out.push(0);
        self.last.pop();
    }

    fn i32(&mut self, id: i16, x: i32) {
        self.field(id, T_I32);
        self.zigzag(i64::from(x));
    }

    fn i64(&mut self, id: i16, x: i64) {
        self.field(id, T_I64);
        self.zigzag(x);
    }

    fn bytes(&mut self, id: i16, b: &[u8]) {
        self.field(id, T_BINARY);
        self.raw_bytes(b);
    }

    fn raw_bytes(&mut self, b: &[u8]) {
        self.varint(b.len() as u64);
        self.out.extend_from_slice(b);
    }

    /// A list field of `n` elements of type `kind` (the elements follow).
    fn list(&mut self, id: i16, kind: u8, n: usize) {
        self.field(id, T_LIST);
        if n < 15 {
            self.out.push(((n as u8) << 4) | kind);
        } else {
            self.out.push(0xF0 | kind);
            self.varint(n as u64);
        }
    }

    /// A struct field (its fields follow, then [`Thrift::end`]).
    fn strukt(&mut self, id: i16) {
        self.field(id, T_STRUCT);
        self.begin();
    }
}

/// One column: its schema and its page's encoded levels and values.
struct Column {
    name: &'static str,
    physical: i32,
    converted: Option<i32>,
    nullable: bool,
    /// Definition levels (nullable columns) then PLAIN values.
    page: Vec<u8>,
}

/// Definition levels of `n` rows (1 = value present) as Parquet's RLE /
/// bit-packed hybrid of bit width 1, one bit-packed run, with the 4-byte
/// length prefix of a v1 data page.
fn levels(n: usize, present: impl Fn(usize) -> bool) -> Vec<u8> {
    let groups = n.div_ceil(8);
    let mut run = Thrift::default();
    run.varint(((groups as u64) << 1) | 1);
    let mut bits = vec![0u8; groups];
    for (i, byte) in bits.iter_mut().enumerate() {
        for b in 0..8 {
            let row = i * 8 + b;
            if row < n && present(row) {
                *byte |= 1 << b;
            }
        }
    }
    run.out.extend_from_slice(&bits);
    let mut page = (run.out.len() as u32).to_le_bytes().to_vec();
    page.extend_from_slice(&run.out);
    page
}

fn plain_f64(values: impl Iterator<Item = f64>, page: &mut Vec<u8>) {
    for v in values {
        page.extend_from_slice(&v.to_le_bytes());
    }
}

fn plain_u64(values: &[u64], page: &mut Vec<u8>) {
    for v in values {
        page.extend_from_slice(&v.to_le_bytes());
    }
}

/// The series' columns, in the file's order, each handed to `cols` as soon
/// as its page is made (the caller writes it and lets it go: the whole file
/// is never held).
fn columns(s: &Series, names: &[&str], mut cols: impl FnMut(Column)) {
    let n = s.len();
    let mut page = Vec::with_capacity(n * 8);
    plain_f64(s.time_s.iter().copied(), &mut page);
    cols(Column {
        name: "time_s",
        physical: DOUBLE,
        converted: None,
        nullable: false,
        page,
    });
    let mut page = Vec::new();
    for &d in &s.domain {
        let name = names[d as usize].as_bytes();
        page.extend_from_slice(&(name.len() as u32).to_le_bytes());
        page.extend_from_slice(name);
    }
    cols(Column {
        name: "domain",
        physical: BYTE_ARRAY,
        converted: Some(UTF8),
        nullable: false,
        page,
    });
    let mut page = levels(n, |i| s.vcpu[i] >= 0);
    for &v in s.vcpu.iter().filter(|&&v| v >= 0) {
        page.extend_from_slice(&v.to_le_bytes());
    }
    cols(Column {
        name: "vcpu",
        physical: INT32,
        converted: None,
        nullable: true,
        page,
    });
    for (name, values) in [
        ("cpu_pct", &s.cpu_pct),
        ("runnable_pct", &s.runnable_pct),
        ("blocked_pct", &s.blocked_pct),
    ] {
        let mut page = Vec::with_capacity(n * 8);
        plain_f64(values.iter().map(|&x| f64::from(x)), &mut page);
        cols(Column {
            name,
            physical: DOUBLE,
            converted: None,
            nullable: false,
            page,
        });
    }
    let mut page = Vec::with_capacity(n * 8);
    plain_u64(&s.executions, &mut page);
    cols(Column {
        name: "executions",
        physical: INT64,
        converted: Some(UINT_64),
        nullable: false,
        page,
    });
    let domain_rows = levels(n, |i| s.vcpu[i] < 0);
    for (name, values) in s.io.named() {
        let mut page = domain_rows.clone();
        plain_u64(values, &mut page);
        cols(Column {
            name,
            physical: INT64,
            converted: Some(UINT_64),
            nullable: true,
            page,
        });
    }
}

/// What the footer says of a column written: its description, and where
/// its chunk (page header and page) lies in the file.
struct Written {
    name: &'static str,
    physical: i32,
    converted: Option<i32>,
    nullable: bool,
    offset: usize,
    size: usize,
}

/// The series as the bytes of a Parquet file: `names` are the domains'
/// names by index, `key_values` the file's key-value metadata.
pub fn series_parquet(s: &Series, names: &[&str], key_values: &[(&str, &str)]) -> Vec<u8> {
    let mut file = Vec::new();
    write_series_parquet(s, names, key_values, &mut file).expect("a Vec takes every byte");
    file
}

/// [`series_parquet`]'s bytes written to `out` a column at a time, without
/// holding the file (nor more than one column's page) in memory.
pub fn write_series_parquet(
    s: &Series,
    names: &[&str],
    key_values: &[(&str, &str)],
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    let n = s.len();
    out.write_all(b"PAR1")?;
    let mut pos = 4;
    let mut written: Vec<Written> = Vec::with_capacity(16);
    let mut result = Ok(());
    columns(s, names, |c| {
        if result.is_err() {
            return;
        }
        let mut h = Thrift::default();
        h.begin();
        h.i32(1, 0); // DATA_PAGE
        h.i32(2, c.page.len() as i32);
        h.i32(3, c.page.len() as i32);
        h.strukt(5);
        h.i32(1, n as i32);
        h.i32(2, PLAIN);
        h.i32(3, RLE);
        h.i32(4, RLE);
        h.end();
        h.end();
        result = out.write_all(&h.out).and_then(|()| out.write_all(&c.page));
        let size = h.out.len() + c.page.len();
        written.push(Written {
            name: c.name,
            physical: c.physical,
            converted: c.converted,
            nullable: c.nullable,
            offset: pos,
            size,
        });
        pos += size;
    });
    result?;
    let mut m = Thrift::default();
    m.begin();
    m.i32(1, 1); // format version
    m.list(2, T_STRUCT, written.len() + 1);
    m.begin(); // the root
    m.bytes(4, b"schema");
    m.i32(5, written.len() as i32);
    m.end();
    for c in &written {
        m.begin();
        m.i32(1, c.physical);
        m.i32(3, i32::from(c.nullable)); // REQUIRED or OPTIONAL
        m.bytes(4, c.name.as_bytes());
        if let Some(t) = c.converted {
            m.i32(6, t);
        }
        m.end();
    }
    m.i64(3, n as i64);
    let groups = usize::from(n > 0);
    m.list(4, T_STRUCT, groups);
    if n > 0 {
        m.begin();
        m.list(1, T_STRUCT, written.len());
        for c in &written {
            m.begin();
            m.i64(2, c.offset as i64);
            m.strukt(3);
            m.i32(1, c.physical);
            let encodings = if c.nullable { 2 } else { 1 };
            m.list(2, T_I32, encodings);
            m.zigzag(i64::from(PLAIN));
            if c.nullable {
                m.zigzag(i64::from(RLE));
            }
            m.list(3, T_BINARY, 1);
            m.raw_bytes(c.name.as_bytes());
            m.i32(4, 0); // UNCOMPRESSED
            m.i64(5, n as i64);
            m.i64(6, c.size as i64);
            m.i64(7, c.size as i64);
            m.i64(9, c.offset as i64);
            m.end();
            m.end();
        }
        let total: usize = written.iter().map(|c| c.size).sum();
        m.i64(2, total as i64);
        m.i64(3, n as i64);
        m.end();
    }
    m.list(5, T_STRUCT, key_values.len());
    for (k, v) in key_values {
        m.begin();
        m.bytes(1, k.as_bytes());
        m.bytes(2, v.as_bytes());
        m.end();
    }
    m.bytes(6, b"vmsched");
    m.end();
    out.write_all(&m.out)?;
    out.write_all(&(m.out.len() as u32).to_le_bytes())?;
    out.write_all(b"PAR1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_field_headers_follow_the_compact_protocol() {
        let mut t = Thrift::default();
        t.begin();
        t.i32(1, -1); // delta 1, zigzag(-1) = 1
        t.i64(17, 300); // delta 16: long form
        t.end();
        assert_eq!(t.out, vec![0x15, 0x01, 0x06, 0x22, 0xD8, 0x04, 0x00]);
    }

    #[test]
    fn levels_are_one_bit_packed_run() {
        // Rows 0 and 2 of 3 present: one group of 8, header (1 << 1) | 1.
        let page = levels(3, |i| i != 1);
        assert_eq!(page, vec![2, 0, 0, 0, 0x03, 0b101]);
    }
}
