//! Casts to PostgreSQL's object identifier types: `regclass`, `regtype`,
//! `regnamespace` and `regproc` (`'cpu'::regclass`, `c.oid::pg_catalog.regclass`,
//! `'pg_catalog.pg_extension'::pg_catalog.regclass` as clients' catalog
//! queries write them).
//!
//! Brewric has no separate reg* types: a name cast to one becomes the OID
//! (type `oid`) found now in the statement's catalog snapshot, so it compares
//! with OID columns and casts on to `oid`; an OID cast to one becomes the
//! object's name as text (what PostgreSQL's output function prints), looked up
//! per row among the snapshot's objects.
//! Must not: change the catalog, or resolve names against anything but the snapshot.

use crate::catalog::system;
use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::kernels::BinaryOp;
use crate::sql::plan::*;
use crate::types::{DataType, Datum};

use super::Binder;
use sqlparser::ast;

/// Which object identifier type a cast names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ObjectIdentifier {
    Class,
    Type,
    Namespace,
    /// regproc: a function's name (text here; pg_type.typinput holds names).
    Proc,
}

impl ObjectIdentifier {
    /// The object identifier type `t` names (`regclass`, `pg_catalog.regtype`, …), if any.
    pub(super) fn of(t: &ast::DataType) -> Option<Self> {
        let name = match t {
            ast::DataType::Regclass => return Some(Self::Class),
            ast::DataType::Custom(name, modifiers) if modifiers.is_empty() => {
                super::object_name_parts(name).pop()?
            }
            _ => return None,
        };
        match name.as_str() {
            "regclass" => Some(Self::Class),
            "regtype" => Some(Self::Type),
            "regnamespace" => Some(Self::Namespace),
            "regproc" => Some(Self::Proc),
            _ => None,
        }
    }

    fn type_name(self) -> &'static str {
        match self {
            Self::Class => "regclass",
            Self::Type => "regtype",
            Self::Namespace => "regnamespace",
            Self::Proc => "regproc",
        }
    }
}

impl Binder<'_> {
    /// `inner::regclass` (or regtype, regnamespace).
    pub(super) fn bind_object_identifier_cast(
        &mut self,
        inner: Expr,
        kind: ObjectIdentifier,
    ) -> DbResult<Expr> {
        if kind == ObjectIdentifier::Proc {
            if is_constant(&inner) {
                let (value, _) = self.constant(&inner)?;
                let name = value.as_str().map(|n| {
                    let n = n.trim();
                    n.strip_prefix("pg_catalog.").unwrap_or(n).to_string()
                });
                return Ok(Expr::Literal(name.map_or(Datum::Null, Datum::text), DataType::Text));
            }
            return self.cast(inner, DataType::Text);
        }
        let names = self.object_names(kind);
        let from = inner.data_type();
        let is_text = matches!(
            from,
            DataType::Unknown | DataType::Text | DataType::Varchar(_) | DataType::Name
        );
        let constant = is_constant(&inner);
        if is_text && constant {
            let (value, _) = self.constant(&inner)?;
            let Some(text) = value.as_str() else {
                return Ok(Expr::Literal(Datum::Null, DataType::Oid));
            };
            let oid = self.object_oid(kind, text, &names)?;
            return Ok(Expr::Literal(Datum::Int64(oid as i64), DataType::Oid));
        }
        if is_text {
            // A name computed per row: its OID among the snapshot's objects (NULL if none).
            let key = inner;
            let mut whens = Vec::with_capacity(names.len());
            for (oid, name) in names {
                let test = self.bind_binary(
                    BinaryOp::Eq,
                    key.clone(),
                    Expr::Literal(Datum::text(name), DataType::Text),
                )?;
                whens.push((test, Expr::Literal(Datum::Int64(oid as i64), DataType::Oid)));
            }
            return Ok(Expr::Case {
                whens,
                otherwise: Box::new(Expr::Literal(Datum::Null, DataType::Oid)),
                data_type: DataType::Oid,
            });
        }
        // An OID: the object's name, or the number itself for an unknown OID (as PostgreSQL prints).
        let key = self.coerce(inner, DataType::Oid, kind.type_name())?;
        let mut whens = Vec::with_capacity(names.len());
        for (oid, name) in names {
            let test = self.bind_binary(
                BinaryOp::Eq,
                key.clone(),
                Expr::Literal(Datum::Int64(oid as i64), DataType::Oid),
            )?;
            whens.push((test, Expr::Literal(Datum::text(name), DataType::Text)));
        }
        let number = self.cast(key, DataType::Text)?;
        Ok(Expr::Case {
            whens,
            otherwise: Box::new(number),
            data_type: DataType::Text,
        })
    }

    /// Every object of `kind` with the name its output function prints.
    fn object_names(&self, kind: ObjectIdentifier) -> Vec<(u32, String)> {
        let ctx = self.system_context();
        match kind {
            ObjectIdentifier::Class => system::regclass_names(&ctx),
            ObjectIdentifier::Namespace => system::namespace_names(&ctx),
            ObjectIdentifier::Proc => Vec::new(),
            ObjectIdentifier::Type => system::type_names()
                .into_iter()
                .map(|(oid, _)| (oid, crate::types::format_type(oid as i64, None)))
                .collect(),
        }
    }

    /// The OID a name (or a number) of `kind` stands for; 42P01 / 42704 when none.
    fn object_oid(
        &self,
        kind: ObjectIdentifier,
        text: &str,
        names: &[(u32, String)],
    ) -> DbResult<u32> {
        let text = text.trim();
        if let Ok(oid) = text.parse::<u32>() {
            return Ok(oid);
        }
        let found = match kind {
            ObjectIdentifier::Class => {
                let parts = split_qualified_name(text);
                let ctx = self.system_context();
                match parts.as_slice() {
                    [name] => system::regclass_oid(&ctx, None, name),
                    [schema, name] => system::regclass_oid(&ctx, Some(schema), name),
                    [db, schema, name] if *db == self.db.name => {
                        system::regclass_oid(&ctx, Some(schema), name)
                    }
                    _ => None,
                }
            }
            ObjectIdentifier::Proc => None,
            ObjectIdentifier::Namespace => {
                let parts = split_qualified_name(text);
                match parts.as_slice() {
                    [name] => names.iter().find(|(_, n)| n == name).map(|(o, _)| *o),
                    _ => None,
                }
            }
            ObjectIdentifier::Type => {
                let bare = text.strip_prefix("pg_catalog.").unwrap_or(text).to_lowercase();
                names
                    .iter()
                    .find(|(_, n)| *n == bare)
                    .map(|(o, _)| *o)
                    .or_else(|| {
                        system::type_names()
                            .into_iter()
                            .find(|(_, n)| *n == bare)
                            .map(|(o, _)| o)
                    })
                    .or_else(|| Some(parse_type_name(&bare)?.oid()))
            }
        };
        found.ok_or_else(|| match kind {
            ObjectIdentifier::Class => DbError::new(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{text}\" does not exist"),
            ),
            ObjectIdentifier::Type => DbError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("type \"{text}\" does not exist"),
            ),
            ObjectIdentifier::Proc => DbError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function \"{text}\" does not exist"),
            ),
            ObjectIdentifier::Namespace => DbError::new(
                sqlstate::INVALID_SCHEMA_NAME,
                format!("schema \"{text}\" does not exist"),
            ),
        })
    }
}

/// Whether `e` reads nothing of a row, a parameter or a sequence: its value is known now.
fn is_constant(e: &Expr) -> bool {
    let mut constant = true;
    e.walk(&mut |e| {
        if matches!(
            e,
            Expr::Column(..)
                | Expr::Outer { .. }
                | Expr::Subquery(_)
                | Expr::Param(..)
                | Expr::NextVal(_)
                | Expr::CurrVal(_)
                | Expr::LastVal(_)
                | Expr::SetVal { .. }
                | Expr::SignalBackend { .. }
        ) {
            constant = false;
        }
    });
    constant
}

/// A type written as SQL (`timestamp with time zone`, `int4`) as regtype input reads it.
fn parse_type_name(text: &str) -> Option<DataType> {
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let t = sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(text)
        .ok()?
        .parse_data_type()
        .ok()?;
    super::bind_data_type(&t).ok()
}

/// `s.t`, `"My Table"`, `public."T"` → its parts, unquoted names folded to lower case.
pub(crate) fn split_qualified_name(name: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut chars = name.trim().chars().peekable();
    loop {
        let mut part = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        part.push('"');
                    } else {
                        break;
                    }
                } else {
                    part.push(c);
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' {
                    break;
                }
                part.extend(c.to_lowercase());
                chars.next();
            }
            part = part.trim().to_string();
        }
        parts.push(part);
        match chars.next() {
            Some('.') => continue,
            _ => break,
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::split_qualified_name;

    #[test]
    fn qualified_names_split_and_fold_like_regclass_input() {
        assert_eq!(split_qualified_name("cpu"), vec!["cpu"]);
        assert_eq!(split_qualified_name("Public.CPU"), vec!["public", "cpu"]);
        assert_eq!(split_qualified_name("\"My \"\"T\"\"\""), vec!["My \"T\""]);
        assert_eq!(split_qualified_name("s.\"A.b\""), vec!["s", "A.b"]);
    }
}
