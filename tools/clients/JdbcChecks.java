// pgjdbc checks, run by tools/clients/run.sh (compiled at run time against
// /usr/share/java/postgresql.jar). pgjdbc always uses the extended protocol:
// text results for a statement's first 4 executions, then (prepareThreshold=5)
// a named server statement with binary results for the types it reads in
// binary. Each parameter check therefore runs its statement 6 times.
// Prints `ok pgjdbc <check>` / `FAIL pgjdbc <check>: <why>`.
import java.io.StringReader;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.sql.*;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.*;

import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;
import org.postgresql.util.PGInterval;
import org.postgresql.util.PGobject;

public class JdbcChecks {
    interface Body { void run() throws Exception; }

    static int failed = 0;

    static boolean check(String name, Body b) {
        try {
            b.run();
            System.out.println("ok pgjdbc " + name);
            return true;
        } catch (Throwable e) {
            String state = e instanceof SQLException ? ((SQLException) e).getSQLState() + " " : "";
            String why = (state + e).replace('\n', ' ');
            if (why.length() > 400) why = why.substring(0, 400);
            System.out.println("FAIL pgjdbc " + name + ": " + why);
            failed++;
            return false;
        }
    }

    static void expect(Object got, Object want, String what) {
        boolean same;
        if (got instanceof Object[] && want instanceof Object[]) same = Arrays.equals((Object[]) got, (Object[]) want);
        else if (got instanceof byte[] && want instanceof byte[]) same = Arrays.equals((byte[]) got, (byte[]) want);
        else if (got instanceof BigDecimal && want instanceof BigDecimal) same = ((BigDecimal) got).compareTo((BigDecimal) want) == 0;
        else if (got instanceof OffsetDateTime && want instanceof OffsetDateTime) same = ((OffsetDateTime) got).isEqual((OffsetDateTime) want);
        else same = Objects.equals(got, want);
        if (!same) throw new AssertionError(what + ": got " + show(got) + ", want " + show(want));
    }

    static String show(Object o) {
        if (o instanceof Object[]) return Arrays.toString((Object[]) o);
        if (o instanceof byte[]) return Arrays.toString((byte[]) o);
        return String.valueOf(o);
    }

    interface Setter { void set(PreparedStatement ps, int i) throws Exception; }
    interface Getter { Object get(ResultSet rs, int i) throws Exception; }

    static final class Val {
        final String name, type; final Setter set; final Getter get; final Object want;
        Val(String name, String type, Setter set, Getter get, Object want) {
            this.name = name; this.type = type; this.set = set; this.get = get; this.want = want;
        }
    }

    static final OffsetDateTime TSTZ = OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 678901000, ZoneOffset.UTC);

    static List<Val> values(Connection c) throws SQLException {
        List<Val> v = new ArrayList<>();
        v.add(new Val("bool", "bool", (p, i) -> p.setBoolean(i, true), (r, i) -> r.getBoolean(i), true));
        v.add(new Val("int2", "int2", (p, i) -> p.setShort(i, (short) 12345), (r, i) -> r.getShort(i), (short) 12345));
        v.add(new Val("int4", "int4", (p, i) -> p.setInt(i, -1234567), (r, i) -> r.getInt(i), -1234567));
        v.add(new Val("int8", "int8", (p, i) -> p.setLong(i, 9007199254740993L), (r, i) -> r.getLong(i), 9007199254740993L));
        v.add(new Val("float4", "float4", (p, i) -> p.setFloat(i, 1.5f), (r, i) -> r.getFloat(i), 1.5f));
        v.add(new Val("float8", "float8", (p, i) -> p.setDouble(i, 0.1), (r, i) -> r.getDouble(i), 0.1));
        v.add(new Val("numeric", "numeric", (p, i) -> p.setBigDecimal(i, new BigDecimal("12345.678900")),
                (r, i) -> r.getBigDecimal(i), new BigDecimal("12345.678900")));
        v.add(new Val("text", "text", (p, i) -> p.setString(i, "h\u00e9llo 'q' \"d\" \\ tab\t"),
                (r, i) -> r.getString(i), "h\u00e9llo 'q' \"d\" \\ tab\t"));
        v.add(new Val("varchar", "varchar", (p, i) -> p.setString(i, "v\u00e4rchar"), (r, i) -> r.getString(i), "v\u00e4rchar"));
        byte[] bytes = {0, 1, (byte) 0xfe, (byte) 0xff, 39, 92};
        v.add(new Val("bytea", "bytea", (p, i) -> p.setBytes(i, bytes), (r, i) -> r.getBytes(i), bytes));
        v.add(new Val("date", "date", (p, i) -> p.setDate(i, java.sql.Date.valueOf("2024-02-29")),
                (r, i) -> r.getDate(i).toString(), "2024-02-29"));
        v.add(new Val("timestamp", "timestamp", (p, i) -> p.setTimestamp(i, Timestamp.valueOf("2024-01-02 03:04:05.678901")),
                (r, i) -> r.getTimestamp(i), Timestamp.valueOf("2024-01-02 03:04:05.678901")));
        v.add(new Val("timestamptz", "timestamptz", (p, i) -> p.setObject(i, TSTZ),
                (r, i) -> r.getObject(i, OffsetDateTime.class), TSTZ));
        v.add(new Val("interval", "interval", (p, i) -> p.setObject(i, new PGInterval("1 day 02:00:03.5")),
                (r, i) -> r.getObject(i), new PGInterval(0, 0, 1, 2, 0, 3.5)));
        v.add(new Val("jsonb", "jsonb", (p, i) -> {
            PGobject o = new PGobject(); o.setType("jsonb"); o.setValue("{\"b\": \"x\", \"a\": [1, 2, null]}");
            p.setObject(i, o);
        }, (r, i) -> r.getString(i), "{\"a\": [1, 2, null], \"b\": \"x\"}"));
        v.add(new Val("int8[]", "int8[]", (p, i) -> p.setArray(i, c.createArrayOf("int8", new Long[]{1L, -2L, 3000000000L})),
                (r, i) -> r.getArray(i).getArray(), new Long[]{1L, -2L, 3000000000L}));
        v.add(new Val("float8[]", "float8[]", (p, i) -> p.setArray(i, c.createArrayOf("float8", new Double[]{1.5, -0.25, 1e20})),
                (r, i) -> r.getArray(i).getArray(), new Double[]{1.5, -0.25, 1e20}));
        v.add(new Val("text[]", "text[]", (p, i) -> p.setArray(i, c.createArrayOf("text", new String[]{"a", "b c", "d\"e", "{x}"})),
                (r, i) -> r.getArray(i).getArray(), new String[]{"a", "b c", "d\"e", "{x}"}));
        return v;
    }

    static void exec(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) { s.execute(sql); }
    }

    static Object scalar(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            if (!r.next()) throw new AssertionError("no row: " + sql);
            return r.getObject(1);
        }
    }

    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://" + env("CLIENTS_HOST", "127.0.0.1") + ":" + env("CLIENTS_PORT", "5432")
                + "/" + env("CLIENTS_DB", "brewric");
        Properties props = new Properties();
        props.setProperty("user", env("CLIENTS_USER", "brewric"));
        props.setProperty("connectTimeout", "10");
        props.setProperty("socketTimeout", "60");
        Connection[] holder = new Connection[1];
        if (!check("connect", () -> holder[0] = DriverManager.getConnection(url, props))) { System.exit(0); }
        Connection c = holder[0];

        check("simple statements", () -> {
            exec(c, "DROP TABLE IF EXISTS cc_jdbc");
            exec(c, "CREATE TABLE cc_jdbc (id int8, name text, v float8)");
            try (Statement s = c.createStatement()) {
                expect(s.executeUpdate("INSERT INTO cc_jdbc VALUES (1, 'one', 1.5), (2, 'two', NULL)"), 2, "update count");
                try (ResultSet r = s.executeQuery("SELECT id, name, v FROM cc_jdbc ORDER BY id")) {
                    r.next(); expect(r.getLong(1), 1L, "id"); expect(r.getString(2), "one", "name"); expect(r.getDouble(3), 1.5, "v");
                    r.next(); expect(r.getObject(3), null, "NULL");
                    expect(r.next(), false, "end");
                }
            }
        });

        // pgjdbc sends the JVM's zone as the startup TimeZone and parses
        // timestamptz text with its offset: a session in a named zone.
        check("JVM time zone America/New_York", () -> {
            TimeZone jvm = TimeZone.getDefault();
            TimeZone.setDefault(TimeZone.getTimeZone("America/New_York"));
            try (Connection z = DriverManager.getConnection(url, props);
                 Statement s = z.createStatement()) {
                try (ResultSet r = s.executeQuery("SHOW TimeZone")) { r.next(); expect(r.getString(1), "America/New_York", "TimeZone"); }
                try (ResultSet r = s.executeQuery("SELECT '2024-07-01 12:00Z'::timestamptz, '2024-01-15 12:00Z'::timestamptz::text")) {
                    r.next();
                    expect(r.getObject(1, OffsetDateTime.class), OffsetDateTime.of(2024, 7, 1, 12, 0, 0, 0, ZoneOffset.UTC), "instant");
                    expect(r.getTimestamp(1).toInstant().toString(), "2024-07-01T12:00:00Z", "getTimestamp");
                    expect(r.getString(2), "2024-01-15 07:00:00-05", "text in the session zone");
                }
                try (PreparedStatement ps = z.prepareStatement("SELECT ?::timestamptz::text, date_trunc('day', ?::timestamptz)")) {
                    OffsetDateTime t = OffsetDateTime.of(2024, 3, 10, 12, 0, 0, 0, ZoneOffset.UTC);
                    for (int round = 0; round < 6; round++) {
                        ps.setObject(1, t); ps.setObject(2, t);
                        try (ResultSet r = ps.executeQuery()) {
                            r.next();
                            expect(r.getString(1), "2024-03-10 08:00:00-04", "parameter shown in the zone");
                            expect(r.getObject(2, OffsetDateTime.class), OffsetDateTime.of(2024, 3, 10, 5, 0, 0, 0, ZoneOffset.UTC), "local midnight (EST)");
                        }
                    }
                }
            } finally {
                TimeZone.setDefault(jvm);
            }
        });

        check("simple query mode (preferQueryMode=simple)", () -> {
            Properties p2 = new Properties(props);
            p2.setProperty("preferQueryMode", "simple");
            try (Connection s = DriverManager.getConnection(url, p2);
                 PreparedStatement ps = s.prepareStatement("SELECT name FROM cc_jdbc WHERE id = ? AND v = ?")) {
                ps.setLong(1, 1); ps.setDouble(2, 1.5);
                try (ResultSet r = ps.executeQuery()) { r.next(); expect(r.getString(1), "one", "name"); }
            }
        });

        List<Val> vals = values(c);
        for (Val v : vals) {
            check("param " + v.name + " (6 executions: text, then binary)", () -> {
                try (PreparedStatement ps = c.prepareStatement("SELECT ?::" + v.type + ", ?::" + v.type + " IS NULL")) {
                    for (int k = 0; k < 6; k++) {
                        v.set.set(ps, 1);
                        ps.setNull(2, Types.OTHER);
                        try (ResultSet r = ps.executeQuery()) {
                            r.next();
                            expect(v.get.get(r, 1), v.want, "execution " + (k + 1));
                            expect(r.getBoolean(2), true, "NULL parameter");
                        }
                    }
                }
            });
        }

        check("table of every type (6 inserts and selects)", () -> {
            exec(c, "DROP TABLE IF EXISTS cc_jdbc_types");
            StringBuilder cols = new StringBuilder(), names = new StringBuilder(), ph = new StringBuilder();
            for (int i = 0; i < vals.size(); i++) {
                String n = "c_" + vals.get(i).name.replace("[]", "a");
                cols.append(", ").append(n).append(' ').append(vals.get(i).type);
                names.append(i > 0 ? ", " : "").append(n);
                ph.append(", ?");
            }
            exec(c, "CREATE TABLE cc_jdbc_types (id int4" + cols + ")");
            try (PreparedStatement ins = c.prepareStatement("INSERT INTO cc_jdbc_types (id, " + names + ") VALUES (?" + ph + ")");
                 PreparedStatement sel = c.prepareStatement("SELECT " + names + " FROM cc_jdbc_types WHERE id = ?")) {
                for (int k = 0; k < 6; k++) {
                    ins.setInt(1, k);
                    for (int i = 0; i < vals.size(); i++) vals.get(i).set.set(ins, i + 2);
                    expect(ins.executeUpdate(), 1, "insert count");
                    sel.setInt(1, k);
                    try (ResultSet r = sel.executeQuery()) {
                        r.next();
                        for (int i = 0; i < vals.size(); i++) expect(vals.get(i).get.get(r, i + 1), vals.get(i).want, vals.get(i).name + " execution " + (k + 1));
                    }
                }
            }
        });

        check("result set metadata (types, nullability)", () -> {
            exec(c, "DROP TABLE IF EXISTS cc_jdbc_meta");
            exec(c, "CREATE TABLE cc_jdbc_meta (ts timestamptz NOT NULL, v float8, n int8, s text)");
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT ts, v, n, s FROM cc_jdbc_meta")) {
                ResultSetMetaData m = r.getMetaData();
                expect(m.getColumnTypeName(1), "timestamptz", "type 1");
                expect(m.getColumnType(2), Types.DOUBLE, "type 2");
                expect(m.getColumnType(3), Types.BIGINT, "type 3");
                expect(m.getColumnType(4), Types.VARCHAR, "type 4");
                expect(m.isNullable(1), ResultSetMetaData.columnNoNulls, "ts nullable");
                expect(m.isNullable(2), ResultSetMetaData.columnNullable, "v nullable");
            }
        });

        check("DatabaseMetaData.getTables and getColumns", () -> {
            DatabaseMetaData md = c.getMetaData();
            List<String> t = new ArrayList<>();
            try (ResultSet r = md.getTables(null, "public", "cc_jdbc%", new String[]{"TABLE"})) {
                while (r.next()) t.add(r.getString("TABLE_NAME"));
            }
            if (!t.contains("cc_jdbc_meta")) throw new AssertionError("tables " + t);
            List<String> cols = new ArrayList<>();
            try (ResultSet r = md.getColumns(null, "public", "cc_jdbc_meta", "%")) {
                while (r.next()) cols.add(r.getString("COLUMN_NAME") + ":" + r.getString("TYPE_NAME"));
            }
            expect(cols.toString(), "[ts:timestamptz, v:float8, n:int8, s:text]", "columns");
        });

        check("batch insert (executeBatch)", () -> {
            exec(c, "DROP TABLE IF EXISTS cc_jdbc_batch");
            exec(c, "CREATE TABLE cc_jdbc_batch (ts timestamptz, v float8)");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO cc_jdbc_batch VALUES (?, ?)")) {
                for (int i = 0; i < 100; i++) {
                    ps.setObject(1, TSTZ.plusSeconds(i)); ps.setDouble(2, i);
                    ps.addBatch();
                }
                int[] counts = ps.executeBatch();
                expect(counts.length, 100, "batch results");
            }
            expect(scalar(c, "SELECT count(*) FROM cc_jdbc_batch"), 100L, "count");
        });

        check("fetch size: portal read in parts", () -> {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("SELECT v FROM cc_jdbc_batch ORDER BY v")) {
                ps.setFetchSize(7);
                double sum = 0; int n = 0;
                try (ResultSet r = ps.executeQuery()) { while (r.next()) { sum += r.getDouble(1); n++; } }
                expect(n, 100, "rows"); expect(sum, 4950.0, "sum");
            } finally { c.commit(); c.setAutoCommit(true); }
        });

        check("CopyManager copyIn (text, csv) and copyOut", () -> {
            CopyManager cm = c.unwrap(PGConnection.class).getCopyAPI();
            exec(c, "DROP TABLE IF EXISTS cc_jdbc_copy");
            exec(c, "CREATE TABLE cc_jdbc_copy (ts timestamptz, host text, v float8)");
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 50; i++) sb.append("2024-01-01 00:00:").append(String.format("%02d", i)).append("+00\th").append(i % 2).append('\t').append(i).append(".5\n");
            sb.append("2024-01-01 00:01:00+00\t\\N\t\\N\n");
            expect(cm.copyIn("COPY cc_jdbc_copy FROM STDIN", new StringReader(sb.toString())), 51L, "copy in");
            expect(cm.copyIn("COPY cc_jdbc_copy (host, v) FROM STDIN WITH (FORMAT csv, HEADER true)",
                    new StringReader("host,v\n\"a,b\",2\n")), 1L, "copy csv");
            StringWriter w = new StringWriter();
            expect(cm.copyOut("COPY (SELECT host, v FROM cc_jdbc_copy WHERE v = 2) TO STDOUT WITH (FORMAT csv)", w), 1L, "copy out");
            expect(w.toString(), "\"a,b\",2\n", "copy out text");
            expect(scalar(c, "SELECT count(v) FROM cc_jdbc_copy"), 51L, "count");
        });

        exec(c, "DROP TABLE IF EXISTS cc_jdbc_pk");
        exec(c, "CREATE TABLE cc_jdbc_pk (id int4 PRIMARY KEY, v text)");
        exec(c, "INSERT INTO cc_jdbc_pk VALUES (1, 'a')");
        String[][] errors = {
            {"42P01", "undefined table", "SELECT * FROM cc_no_such_table"},
            {"22012", "division by zero", "SELECT ?::int4 / 0"},
            {"23505", "unique violation", "INSERT INTO cc_jdbc_pk VALUES (?, 'b')"},
        };
        for (String[] e : errors) {
            check("error " + e[0] + " " + e[1], () -> {
                try (PreparedStatement ps = c.prepareStatement(e[2])) {
                    if (e[2].contains("?")) ps.setInt(1, 1);
                    ps.execute();
                    throw new AssertionError("no error");
                } catch (SQLException x) {
                    expect(x.getSQLState(), e[0], "SQLSTATE");
                }
                expect(scalar(c, "SELECT 1"), 1, "next statement");
            });
        }

        check("transaction: error, ROLLBACK, continue", () -> {
            c.setAutoCommit(false);
            try {
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO cc_jdbc_pk VALUES (?, ?)")) {
                    ps.setInt(1, 10); ps.setString(2, "in tx"); ps.executeUpdate();
                }
                try { scalar(c, "SELECT 1 / 0"); throw new AssertionError("no error"); }
                catch (SQLException x) { expect(x.getSQLState(), "22012", "SQLSTATE"); }
                try { scalar(c, "SELECT 1"); throw new AssertionError("ran in a failed transaction"); }
                catch (SQLException x) { expect(x.getSQLState(), "25P02", "SQLSTATE"); }
                c.rollback();
                expect(scalar(c, "SELECT count(*) FROM cc_jdbc_pk WHERE id = 10"), 0L, "rolled back");
                exec(c, "INSERT INTO cc_jdbc_pk VALUES (11, 'committed')");
                c.commit();
            } finally { c.setAutoCommit(true); }
            expect(scalar(c, "SELECT v FROM cc_jdbc_pk WHERE id = 11"), "committed", "committed row");
        });

        check("drop tables, close", () -> {
            for (String t : new String[]{"cc_jdbc", "cc_jdbc_types", "cc_jdbc_meta", "cc_jdbc_batch", "cc_jdbc_copy", "cc_jdbc_pk"})
                exec(c, "DROP TABLE IF EXISTS " + t);
            c.close();
        });
    }

    static String env(String k, String d) {
        String v = System.getenv(k);
        return v == null || v.isEmpty() ? d : v;
    }
}
