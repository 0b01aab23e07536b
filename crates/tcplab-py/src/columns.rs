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

/// A table: its number of rows, column names in declaration order, one vector of cells per column.
#[derive(Default)]
pub struct Table {
    rows: usize,
    names: Vec<&'static str>,
    cols: Vec<Vec<Cell>>,
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

impl Table {
    /// `(columns, absent, rows)`: a dict of column name -> values, a dict of column name -> the
    /// rows that lack it, a list, or True for every row (only columns some rows lack). The values:
    /// None when every row's is missing (null, or no key); for a column of one numeric type with
    /// nothing else than missing values (`packed`), (numpy dtype, little-endian bytes) or, with
    /// missing values, (numpy dtype, bytes, their rows); any other, a list (None for null). And
    /// the number of rows.
    pub fn into_py(self, py: Python<'_>) -> PyResult<(PyObject, PyObject, usize)> {
        let cols = PyDict::new(py);
        let absent = PyDict::new(py);
        for (name, cells) in self.names.into_iter().zip(self.cols) {
            let lacking: Vec<usize> = cells.iter().enumerate().filter(|(_, c)| matches!(c, Cell::Absent)).map(|(i, _)| i).collect();
            if lacking.len() == cells.len() {
                absent.set_item(name, true)?;
                cols.set_item(name, py.None())?;
                continue;
            }
            if !lacking.is_empty() {
                absent.set_item(name, lacking)?;
            }
            if cells.iter().all(missing) {
                cols.set_item(name, py.None())?;
                continue;
            }
            if let Some((dtype, bytes, gaps)) = packed(&cells) {
                let bytes = pyo3::types::PyBytes::new(py, &bytes);
                if gaps.is_empty() {
                    cols.set_item(name, (dtype, bytes))?;
                } else {
                    cols.set_item(name, (dtype, bytes, gaps))?;
                }
                continue;
            }
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

/// A column whose every cell is a number of one kind, or a boolean, or missing (`missing`), as
/// (numpy dtype, little-endian bytes, the rows of the missing cells, whose bytes are 0 or NaN):
/// integers that fit an int64 (what pandas makes of such Python ints), floats, booleans (none
/// missing: pandas makes an object column of booleans and None). None for any other column
/// (strings; an integer beyond int64; missing cells both null and without a key, which pandas
/// would tell apart): it goes as a list.
fn packed(cells: &[Cell]) -> Option<(&'static str, Vec<u8>, Vec<usize>)> {
    let (mut null, mut lacking) = (false, false);
    for c in cells {
        null |= missing(c) && !matches!(c, Cell::Absent);
        lacking |= matches!(c, Cell::Absent);
    }
    if null && lacking {
        return None;
    }
    let mut out = Vec::with_capacity(cells.len() * 8);
    let mut gaps = Vec::new();
    match cells.iter().find(|c| !missing(c))? {
        Cell::I64(_) | Cell::U64(_) => {
            for (i, c) in cells.iter().enumerate() {
                let v = match *c {
                    Cell::I64(v) => v,
                    Cell::U64(v) => i64::try_from(v).ok()?,
                    ref c if missing(c) => {
                        gaps.push(i);
                        0
                    }
                    _ => return None,
                };
                out.extend_from_slice(&v.to_le_bytes());
            }
            Some(("<i8", out, gaps))
        }
        Cell::F64(_) => {
            for (i, c) in cells.iter().enumerate() {
                let v = match *c {
                    Cell::F64(v) if v.is_finite() => v,
                    ref c if missing(c) => {
                        gaps.push(i);
                        f64::NAN
                    }
                    _ => return None,
                };
                out.extend_from_slice(&v.to_le_bytes());
            }
            Some(("<f8", out, gaps))
        }
        Cell::Bool(_) => {
            for c in cells {
                match *c {
                    Cell::Bool(b) => out.push(b as u8),
                    _ => return None,
                }
            }
            Some(("?", out, gaps))
        }
        _ => None,
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
            t.cols.push(Vec::with_capacity(t.rows));
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
