//! The one error type that crosses layers: a PostgreSQL SQLSTATE, a message and
//! optional detail/hint/caret position. Every layer builds these with the
//! constructors below; the wire layer turns them into ErrorResponse fields.
//! Must not: panic, or carry anything a client cannot be shown.

use std::fmt;

/// SQLSTATE codes Brewric emits (PostgreSQL Appendix A names).
pub mod sqlstate {
    pub const SUCCESSFUL_COMPLETION: &str = "00000";
    pub const CONNECTION_EXCEPTION: &str = "08000";
    pub const PROTOCOL_VIOLATION: &str = "08P01";
    pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
    pub const CARDINALITY_VIOLATION: &str = "21000";
    pub const DATA_EXCEPTION: &str = "22000";
    pub const STRING_DATA_RIGHT_TRUNCATION: &str = "22001";
    pub const NUMERIC_VALUE_OUT_OF_RANGE: &str = "22003";
    pub const DATETIME_FIELD_OVERFLOW: &str = "22008";
    pub const INVALID_DATETIME_FORMAT: &str = "22007";
    pub const DIVISION_BY_ZERO: &str = "22012";
    pub const INVALID_PARAMETER_VALUE: &str = "22023";
    pub const INVALID_ROW_COUNT_IN_LIMIT: &str = "2201W";
    pub const INVALID_ESCAPE_SEQUENCE: &str = "22025";
    pub const INVALID_TEXT_REPRESENTATION: &str = "22P02";
    pub const BAD_COPY_FILE_FORMAT: &str = "22P04";
    pub const CHARACTER_NOT_IN_REPERTOIRE: &str = "22021";
    pub const INVALID_BINARY_REPRESENTATION: &str = "22P03";
    pub const NOT_NULL_VIOLATION: &str = "23502";
    pub const UNIQUE_VIOLATION: &str = "23505";
    pub const INVALID_CURSOR_STATE: &str = "24000";
    pub const ACTIVE_SQL_TRANSACTION: &str = "25001";
    pub const NO_ACTIVE_SQL_TRANSACTION: &str = "25P01";
    pub const IN_FAILED_SQL_TRANSACTION: &str = "25P02";
    pub const INVALID_SQL_STATEMENT_NAME: &str = "26000";
    pub const INVALID_CATALOG_NAME: &str = "3D000";
    pub const INVALID_SCHEMA_NAME: &str = "3F000";
    pub const SYNTAX_ERROR: &str = "42601";
    pub const WARNING: &str = "01000";
    pub const UNDEFINED_COLUMN: &str = "42703";
    pub const UNDEFINED_FUNCTION: &str = "42883";
    pub const UNDEFINED_TABLE: &str = "42P01";
    pub const UNDEFINED_PARAMETER: &str = "42P02";
    pub const UNDEFINED_OBJECT: &str = "42704";
    pub const DUPLICATE_COLUMN: &str = "42701";
    pub const DUPLICATE_DATABASE: &str = "42P04";
    pub const DUPLICATE_SCHEMA: &str = "42P06";
    pub const DUPLICATE_TABLE: &str = "42P07";
    pub const DUPLICATE_OBJECT: &str = "42710";
    pub const AMBIGUOUS_COLUMN: &str = "42702";
    pub const AMBIGUOUS_FUNCTION: &str = "42725";
    pub const DATATYPE_MISMATCH: &str = "42804";
    pub const CANNOT_COERCE: &str = "42846";
    pub const GROUPING_ERROR: &str = "42803";
    pub const INDETERMINATE_DATATYPE: &str = "42P18";
    pub const WINDOWING_ERROR: &str = "42P20";
    pub const NULL_VALUE_NOT_ALLOWED: &str = "22004";
    pub const INVALID_WINDOW_FRAME_OFFSET: &str = "22013";
    pub const INVALID_ARGUMENT_FOR_NTILE: &str = "22014";
    pub const INVALID_ARGUMENT_FOR_NTH_VALUE: &str = "22016";
    pub const INVALID_COLUMN_REFERENCE: &str = "42P10";
    pub const INVALID_FUNCTION_DEFINITION: &str = "42P13";
    pub const DUPLICATE_FUNCTION: &str = "42723";
    pub const UNDEFINED_PREPARED_STATEMENT: &str = "26000";
    pub const DUPLICATE_PREPARED_STATEMENT: &str = "42P05";
    pub const DUPLICATE_CURSOR: &str = "42P03";
    pub const WRONG_OBJECT_TYPE: &str = "42809";
    pub const INSUFFICIENT_PRIVILEGE: &str = "42501";
    pub const PROGRAM_LIMIT_EXCEEDED: &str = "54000";
    pub const OUT_OF_MEMORY: &str = "53200";
    pub const OBJECT_IN_USE: &str = "55006";
    pub const OBJECT_NOT_IN_PREREQUISITE_STATE: &str = "55000";
    pub const CHECK_VIOLATION: &str = "23514";
    pub const FOREIGN_KEY_VIOLATION: &str = "23503";
    pub const INVALID_FOREIGN_KEY: &str = "42830";
    pub const DEPENDENT_OBJECTS_STILL_EXIST: &str = "2BP01";
    pub const QUERY_CANCELED: &str = "57014";
    pub const ADMIN_SHUTDOWN: &str = "57P01";
    pub const INTERNAL_ERROR: &str = "XX000";
    pub const INVALID_PASSWORD: &str = "28P01";
}

/// An error a client can be shown, with the SQLSTATE PostgreSQL would use.
/// Its fields (see [`ErrorFields`]) are read and set through it as through a
/// reference. Boxed: every `DbResult` carries one, and with the fields
/// inline each `Result` of every layer was at least 136 bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct DbError(Box<ErrorFields>);

/// What an ErrorResponse tells the client.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorFields {
    pub code: &'static str,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// 1-based character position in the query text (the caret psql prints).
    pub position: Option<u32>,
    /// Where it happened (ErrorResponse field W), e.g. `COPY t, line 3, column a: "x"`.
    pub where_: Option<String>,
    /// "ERROR" or "FATAL".
    pub severity: &'static str,
}

impl std::ops::Deref for DbError {
    type Target = ErrorFields;
    fn deref(&self) -> &ErrorFields {
        &self.0
    }
}

impl std::ops::DerefMut for DbError {
    fn deref_mut(&mut self) -> &mut ErrorFields {
        &mut self.0
    }
}

pub type DbResult<T> = Result<T, DbError>;

impl DbError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        DbError(Box::new(ErrorFields {
            code,
            message: message.into(),
            detail: None,
            hint: None,
            position: None,
            where_: None,
            severity: "ERROR",
        }))
    }
    /// The fields, owned (to move the strings out).
    pub fn into_fields(self) -> ErrorFields {
        *self.0
    }
    /// The message alone (for callers that report a plain string).
    pub fn into_message(self) -> String {
        self.0.message
    }
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
    pub fn with_where(mut self, context: impl Into<String>) -> Self {
        self.where_ = Some(context.into());
        self
    }
    pub fn with_position(mut self, position: u32) -> Self {
        self.position = Some(position);
        self
    }
    pub fn fatal(mut self) -> Self {
        self.severity = "FATAL";
        self
    }
    pub fn syntax(message: impl Into<String>) -> Self {
        Self::new(sqlstate::SYNTAX_ERROR, message)
    }
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(sqlstate::FEATURE_NOT_SUPPORTED, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(sqlstate::INTERNAL_ERROR, message)
    }
    pub fn protocol(message: impl Into<String>) -> Self {
        Self::new(sqlstate::PROTOCOL_VIOLATION, message)
    }
    pub fn datatype_mismatch(message: impl Into<String>) -> Self {
        Self::new(sqlstate::DATATYPE_MISMATCH, message)
    }
    pub fn invalid_text(type_name: &str, input: &str) -> Self {
        Self::new(
            sqlstate::INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type {type_name}: \"{input}\""),
        )
    }
    pub fn out_of_range(type_name: &str) -> Self {
        Self::new(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("{type_name} out of range"),
        )
    }
    pub fn division_by_zero() -> Self {
        Self::new(sqlstate::DIVISION_BY_ZERO, "division by zero")
    }
    pub fn canceled() -> Self {
        Self::new(
            sqlstate::QUERY_CANCELED,
            "canceling statement due to user request",
        )
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} ({})", self.severity, self.message, self.code)
    }
}

impl std::error::Error for DbError {}
