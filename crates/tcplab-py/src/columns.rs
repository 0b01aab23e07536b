//! The result tables of a run as columns instead of one JSON record per row: a numeric column as
//! the bytes of a numpy array, any other as a Python list. Any `Serialize` row type of scalar fields (numbers, booleans, strings, options of
//! them) is taken apart field by field through serde, in the order the fields are declared, so a
//! row type gains a column here as soon as it gains a field. Each cell holds the value its JSON
//! would hold: a float that JSON cannot hold (NaN, ±inf) is `None` as serde_json writes `null`,
//! and a field the row skips (`skip_serializing_if`) is `None` with its row noted as absent, so
//! that the records rebuilt in Python are the JSON records key for key.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde::ser::{self, Impossible, Serialize};
use std::fmt;

/// One cell, as serde hands it over.
pub enum Cell {
    /// The row skipped the field (`skip_serializing_if`): no key in its JSON record.
    Absent,
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(String),
}

/// A table: its number of rows, column names in declaration order, one column each.
#[derive(Default)]
pub struct Table {
    rows: usize,
    names: Vec<&'static str>,
    cols: Vec<Column>,
}

#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

/// The rows as columns; an error names a field that is not a scalar (a bug in a row type).
pub fn table<T: Serialize>(rows: &[T]) -> Result<Table, Error> {
    let mut t = Table { rows: rows.len(), ..Table::default() };
    for (i, r) in rows.iter().enumerate() {
        r.serialize(RowSer { t: &mut t, row: i, field: 0 })?;
    }
    Ok(t)
}

/// One column as its cells arrive, kept in the form it will be handed over in: packed numbers
/// (8 bytes a cell, or 1 for booleans) while every cell allows it, else the cells themselves (a
/// `Cell` is 32 bytes: a table of 4x10^5 link rows and 30 columns held 384 MB of them before
/// being packed).
///
/// The rules are `packed`'s: the first cell that is not missing (`missing`) sets the kind; an
/// integer column takes integers that fit an int64, a float column finite floats, both with
/// missing cells (their rows noted, 0 or NaN in their place); a boolean column takes booleans
/// only; any other cell, or missing cells both null and without a key, make it a column of cells.
#[derive(Default)]
struct Column {
    rows: usize,
    /// Rows without the key (`Cell::Absent`).
    lacking: Vec<usize>,
    /// Rows whose cell is missing (without the key, null, or a float JSON cannot hold).
    gaps: Vec<usize>,
    /// Some missing cell is null (has the key).
    null: bool,
    data: Data,
}

#[derive(Default)]
enum Data {
    /// Every cell so far missing.
    #[default]
    Missing,
    Ints(Vec<i64>),
    Floats(Vec<f64>),
    Bools(Vec<u8>),
    /// Any other column: missing cells as `Cell::Null` (each becomes None).
    Cells(Vec<Cell>),
}

impl Column {
    fn push(&mut self, cell: Cell) {
        let row = self.rows;
        self.rows += 1;
        if missing(&cell) {
            if matches!(cell, Cell::Absent) {
                self.lacking.push(row);
            } else {
                self.null = true;
            }
            self.gaps.push(row);
            match &mut self.data {
                Data::Missing => {}
                Data::Ints(v) => v.push(0),
                Data::Floats(v) => v.push(f64::NAN),
                Data::Bools(_) => {
                    self.unpack();
                    self.push_cell(Cell::Null);
                }
                Data::Cells(c) => c.push(Cell::Null),
            }
            return;
        }
        match (&mut self.data, &cell) {
            (Data::Ints(v), Cell::I64(x)) => v.push(*x),
            (Data::Ints(v), Cell::U64(x)) if i64::try_from(*x).is_ok() => v.push(*x as i64),
            (Data::Floats(v), Cell::F64(x)) => v.push(*x),
            (Data::Bools(v), Cell::Bool(b)) => v.push(*b as u8),
            (Data::Cells(c), _) => c.push(cell),
            (Data::Missing, _) => {
                // The first cell that is not missing; `row` missing ones before it.
                self.data = match cell {
                    Cell::I64(x) => Data::Ints(with(vec![0; row], x)),
                    Cell::U64(x) if i64::try_from(x).is_ok() => Data::Ints(with(vec![0; row], x as i64)),
                    Cell::F64(x) => Data::Floats(with(vec![f64::NAN; row], x)),
                    Cell::Bool(b) if row == 0 => Data::Bools(vec![b as u8]),
                    c => Data::Cells(with((0..row).map(|_| Cell::Null).collect(), c)),
                };
            }
            _ => {
                self.unpack();
                self.push_cell(cell);
            }
        }
    }

    fn push_cell(&mut self, cell: Cell) {
        if let Data::Cells(c) = &mut self.data {
            c.push(cell);
        }
    }

    /// The packed cells as cells (a cell that does not fit the column's kind arrived).
    fn unpack(&mut self) {
        let mut gap = self.gaps.iter().copied().peekable();
        let mut cell = |i: usize, c: Cell| {
            if gap.next_if_eq(&i).is_some() {
                Cell::Null
            } else {
                c
            }
        };
        self.data = Data::Cells(match std::mem::take(&mut self.data) {
            Data::Missing => (0..self.rows).map(|_| Cell::Null).collect(),
            Data::Ints(v) => v.into_iter().enumerate().map(|(i, x)| cell(i, Cell::I64(x))).collect(),
            Data::Floats(v) => v.into_iter().enumerate().map(|(i, x)| cell(i, Cell::F64(x))).collect(),
            Data::Bools(v) => v.into_iter().enumerate().map(|(i, b)| cell(i, Cell::Bool(b != 0))).collect(),
            Data::Cells(c) => c,
        });
    }
}

fn with<T>(mut v: Vec<T>, x: T) -> Vec<T> {
    v.push(x);
    v
}

/// Little-endian bytes of a packed column.
fn le_bytes<'py, T: Copy, const N: usize>(py: Python<'py>, v: &[T], to: impl Fn(T) -> [u8; N]) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    pyo3::types::PyBytes::new_with(py, v.len() * N, |buf| {
        for (out, &x) in buf.chunks_exact_mut(N).zip(v) {
            out.copy_from_slice(&to(x));
        }
        Ok(())
    })
}

impl Table {
    /// `(columns, absent, rows)`: a dict of column name -> values, a dict of column name -> the
    /// rows that lack it, a list, or True for every row (only columns some rows lack). The values:
    /// None when every row's is missing (null, or no key); for a column of one numeric type with
    /// nothing else than missing values (`Column`), (numpy dtype, little-endian bytes) or, with
    /// missing values, (numpy dtype, bytes, their rows); any other, a list (None for null). And
    /// the number of rows.
    pub fn into_py(self, py: Python<'_>) -> PyResult<(PyObject, PyObject, usize)> {
        let cols = PyDict::new(py);
        let absent = PyDict::new(py);
        for (name, mut col) in self.names.into_iter().zip(self.cols) {
            if col.lacking.len() == col.rows {
                absent.set_item(name, true)?;
                cols.set_item(name, py.None())?;
                continue;
            }
            let lacking = !col.lacking.is_empty();
            if lacking {
                absent.set_item(name, std::mem::take(&mut col.lacking))?;
            }
            if matches!(col.data, Data::Missing) {
                cols.set_item(name, py.None())?;
                continue;
            }
            if col.null && lacking {
                // Null and no key both: pandas would tell them apart, so cells.
                col.unpack();
            }
            let packed = match &col.data {
                Data::Missing => unreachable!("all missing above"),
                Data::Ints(v) => Some(("<i8", le_bytes(py, v, i64::to_le_bytes)?)),
                Data::Floats(v) => Some(("<f8", le_bytes(py, v, f64::to_le_bytes)?)),
                Data::Bools(v) => Some(("?", pyo3::types::PyBytes::new(py, v))),
                Data::Cells(_) => None,
            };
            if let Some((dtype, bytes)) = packed {
                if col.gaps.is_empty() {
                    cols.set_item(name, (dtype, bytes))?;
                } else {
                    cols.set_item(name, (dtype, bytes, col.gaps))?;
                }
                continue;
            }
            let Data::Cells(cells) = col.data else { unreachable!("packed above") };
            let items = cells.into_iter().map(|c| -> PyResult<PyObject> {
                Ok(match c {
                    Cell::Absent | Cell::Null => py.None(),
                    Cell::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
                    Cell::I64(v) => v.into_pyobject(py)?.into_any().unbind(),
                    Cell::U64(v) => v.into_pyobject(py)?.into_any().unbind(),
                    Cell::F64(v) if v.is_finite() => v.into_pyobject(py)?.into_any().unbind(),
                    Cell::F64(_) => py.None(),
                    Cell::Str(s) => s.into_pyobject(py)?.into_any().unbind(),
                })
            });
            let items: Vec<PyObject> = items.collect::<PyResult<_>>()?;
            cols.set_item(name, PyList::new(py, items)?)?;
        }
        Ok((cols.into_any().unbind(), absent.into_any().unbind(), self.rows))
    }
}

/// A cell whose JSON is null or no key at all: the field was skipped, is None, or is a float JSON
/// cannot hold (serde_json writes NaN and ±inf as null).
fn missing(c: &Cell) -> bool {
    match c {
        Cell::Absent | Cell::Null => true,
        Cell::F64(v) => !v.is_finite(),
        _ => false,
    }
}

/// Serialises one row (a struct) into the table's columns.
struct RowSer<'a> {
    t: &'a mut Table,
    row: usize,
    field: usize,
}

impl RowSer<'_> {
    fn put(&mut self, key: &'static str, cell: Cell) -> Result<(), Error> {
        let t = &mut *self.t;
        if self.row == 0 {
            t.names.push(key);
            t.cols.push(Column::default());
        } else if t.names.get(self.field) != Some(&key) {
            return Err(Error(format!("row {} has field {key:?} where the first row had {:?}", self.row, t.names.get(self.field))));
        }
        t.cols[self.field].push(cell);
        self.field += 1;
        Ok(())
    }
}

impl ser::SerializeStruct for RowSer<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<V: ?Sized + Serialize>(&mut self, key: &'static str, value: &V) -> Result<(), Error> {
        let cell = value.serialize(CellSer).map_err(|e| Error(format!("field {key:?}: {e}")))?;
        self.put(key, cell)
    }

    fn skip_field(&mut self, key: &'static str) -> Result<(), Error> {
        self.put(key, Cell::Absent)
    }

    fn end(self) -> Result<(), Error> {
        if self.field != self.t.names.len() {
            return Err(Error(format!("row {} has {} fields, the first row {}", self.row, self.field, self.t.names.len())));
        }
        Ok(())
    }
}

fn not_a_row() -> Error {
    Error("a result row must be a struct".into())
}

impl<'a> ser::Serializer for RowSer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = RowSer<'a>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self, Error> {
        Ok(self)
    }
    fn serialize_bool(self, _: bool) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_i8(self, _: i8) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_i16(self, _: i16) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_i32(self, _: i32) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_i64(self, _: i64) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_u8(self, _: u8) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_u16(self, _: u16) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_u32(self, _: u32) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_u64(self, _: u64) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_f32(self, _: f32) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_f64(self, _: f64) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_char(self, _: char) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_str(self, _: &str) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_some<V: ?Sized + Serialize>(self, _: &V) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_newtype_struct<V: ?Sized + Serialize>(self, _: &'static str, _: &V) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_newtype_variant<V: ?Sized + Serialize>(self, _: &'static str, _: u32, _: &'static str, _: &V) -> Result<(), Error> {
        Err(not_a_row())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(not_a_row())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(not_a_row())
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Error> {
        Err(not_a_row())
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeTupleVariant, Error> {
        Err(not_a_row())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(not_a_row())
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeStructVariant, Error> {
        Err(not_a_row())
    }
}

/// Serialises one field's value into a cell.
struct CellSer;

fn not_a_scalar(what: &str) -> Error {
    Error(format!("a column holds numbers, booleans, strings or nothing, not {what}"))
}

impl ser::Serializer for CellSer {
    type Ok = Cell;
    type Error = Error;
    type SerializeSeq = Impossible<Cell, Error>;
    type SerializeTuple = Impossible<Cell, Error>;
    type SerializeTupleStruct = Impossible<Cell, Error>;
    type SerializeTupleVariant = Impossible<Cell, Error>;
    type SerializeMap = Impossible<Cell, Error>;
    type SerializeStruct = Impossible<Cell, Error>;
    type SerializeStructVariant = Impossible<Cell, Error>;

    fn serialize_bool(self, v: bool) -> Result<Cell, Error> {
        Ok(Cell::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Cell, Error> {
        Ok(Cell::I64(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Cell, Error> {
        Ok(Cell::I64(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Cell, Error> {
        Ok(Cell::I64(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Cell, Error> {
        Ok(Cell::I64(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Cell, Error> {
        Ok(Cell::U64(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Cell, Error> {
        Ok(Cell::U64(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Cell, Error> {
        Ok(Cell::U64(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Cell, Error> {
        Ok(Cell::U64(v))
    }
    fn serialize_f32(self, v: f32) -> Result<Cell, Error> {
        Ok(Cell::F64(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<Cell, Error> {
        Ok(Cell::F64(v))
    }
    fn serialize_char(self, v: char) -> Result<Cell, Error> {
        Ok(Cell::Str(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Cell, Error> {
        Ok(Cell::Str(v.to_string()))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<Cell, Error> {
        Err(not_a_scalar("bytes"))
    }
    fn serialize_none(self) -> Result<Cell, Error> {
        Ok(Cell::Null)
    }
    fn serialize_some<V: ?Sized + Serialize>(self, v: &V) -> Result<Cell, Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Cell, Error> {
        Ok(Cell::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Cell, Error> {
        Ok(Cell::Null)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<Cell, Error> {
        Ok(Cell::Str(variant.to_string()))
    }
    fn serialize_newtype_struct<V: ?Sized + Serialize>(self, _: &'static str, v: &V) -> Result<Cell, Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<V: ?Sized + Serialize>(self, _: &'static str, _: u32, _: &'static str, _: &V) -> Result<Cell, Error> {
        Err(not_a_scalar("an enum variant with data"))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(not_a_scalar("a sequence"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(not_a_scalar("a tuple"))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Error> {
        Err(not_a_scalar("a tuple"))
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeTupleVariant, Error> {
        Err(not_a_scalar("an enum variant with data"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(not_a_scalar("a map"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(not_a_scalar("a struct"))
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeStructVariant, Error> {
        Err(not_a_scalar("an enum variant with data"))
    }
}
