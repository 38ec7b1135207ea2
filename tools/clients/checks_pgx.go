// pgx v4 (Go; TSBS's driver, Debian's golang-github-jackc-pgx-v4-dev) checks,
// built and run by tools/clients/run.sh in GOPATH mode. pgx prepares every
// parameterized query (named statement + Describe), sends parameters and reads
// results in binary for the types it knows, pings with ";", and CopyFrom is a
// binary COPY after describing `select <columns> from <table>`.
// Prints `ok pgx <check>` / `FAIL pgx <check>: <why>`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/jackc/pgconn"
	"github.com/jackc/pgtype"
	"github.com/jackc/pgx/v4"
)

func env(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

func check(name string, f func() error) bool {
	err := f()
	if err == nil {
		fmt.Printf("ok pgx %s\n", name)
		return true
	}
	why := err.Error()
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		why = pe.Code + " " + why
	}
	why = strings.ReplaceAll(why, "\n", " | ")
	if len(why) > 400 {
		why = why[:400]
	}
	fmt.Printf("FAIL pgx %s: %s\n", name, why)
	return false
}

func same(got, want interface{}, what string) error {
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("%s: got %#v, want %#v", what, got, want)
	}
	return nil
}

func code(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	if err == nil {
		return "no error"
	}
	return err.Error()
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	dsn := fmt.Sprintf("host=%s port=%s user=%s dbname=%s sslmode=disable connect_timeout=10",
		env("CLIENTS_HOST", "127.0.0.1"), env("CLIENTS_PORT", "5432"), env("CLIENTS_USER", "brewric"), env("CLIENTS_DB", "brewric"))
	var c *pgx.Conn
	if !check("connect", func() (err error) { c, err = pgx.Connect(ctx, dsn); return }) {
		return
	}
	defer c.Close(ctx)

	check("ping", func() error { return c.Ping(ctx) })

	check("simple statements (Exec without arguments)", func() error {
		for _, s := range []string{"DROP TABLE IF EXISTS cc_pgx", "CREATE TABLE cc_pgx (id int8, name text, v float8)"} {
			if _, err := c.Exec(ctx, s); err != nil {
				return err
			}
		}
		tag, err := c.Exec(ctx, "INSERT INTO cc_pgx VALUES (1, 'one', 1.5), (2, 'two', NULL)")
		if err != nil {
			return err
		}
		return same(tag.RowsAffected(), int64(2), "rows affected")
	})

	ts := time.Date(2024, 1, 2, 3, 4, 5, 678901000, time.UTC)
	type val struct {
		name, typ string
		in        interface{}
		out       func() interface{} // a pointer to scan into
		want      interface{}
	}
	num := pgtype.Numeric{}
	_ = num.Set("12345.678900")
	vals := []val{
		{"bool", "bool", true, func() interface{} { return new(bool) }, true},
		{"int2", "int2", int16(12345), func() interface{} { return new(int16) }, int16(12345)},
		{"int4", "int4", int32(-1234567), func() interface{} { return new(int32) }, int32(-1234567)},
		{"int8", "int8", int64(9007199254740993), func() interface{} { return new(int64) }, int64(9007199254740993)},
		{"float4", "float4", float32(1.5), func() interface{} { return new(float32) }, float32(1.5)},
		{"float8", "float8", 0.1, func() interface{} { return new(float64) }, 0.1},
		{"numeric", "numeric", &num, func() interface{} { return new(float64) }, 12345.6789},
		{"text", "text", "h\u00e9llo 'q' \"d\" \\ tab\t", func() interface{} { return new(string) }, "h\u00e9llo 'q' \"d\" \\ tab\t"},
		{"varchar", "varchar", "v\u00e4rchar", func() interface{} { return new(string) }, "v\u00e4rchar"},
		{"bytea", "bytea", []byte{0, 1, 0xfe, 0xff, 39, 92}, func() interface{} { return new([]byte) }, []byte{0, 1, 0xfe, 0xff, 39, 92}},
		{"date", "date", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), func() interface{} { return new(time.Time) }, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"timestamp", "timestamp", time.Date(2024, 1, 2, 3, 4, 5, 678901000, time.UTC), func() interface{} { return new(time.Time) }, time.Date(2024, 1, 2, 3, 4, 5, 678901000, time.UTC)},
		{"timestamptz", "timestamptz", ts, func() interface{} { return new(time.Time) }, ts},
		{"interval", "interval", 26*time.Hour + 3500*time.Millisecond, func() interface{} { return new(time.Duration) }, 26*time.Hour + 3500*time.Millisecond},
		{"jsonb", "jsonb", map[string]interface{}{"a": []interface{}{1, 2, nil}, "b": "x"}, func() interface{} { return new(map[string]interface{}) },
			map[string]interface{}{"a": []interface{}{1.0, 2.0, nil}, "b": "x"}},
		{"int8[]", "int8[]", []int64{1, -2, 3000000000}, func() interface{} { return new([]int64) }, []int64{1, -2, 3000000000}},
		{"float8[]", "float8[]", []float64{1.5, -0.25, 1e20}, func() interface{} { return new([]float64) }, []float64{1.5, -0.25, 1e20}},
		{"text[]", "text[]", []string{"a", "b c", "d\"e", "{x}"}, func() interface{} { return new([]string) }, []string{"a", "b c", "d\"e", "{x}"}},
	}
	for _, v := range vals {
		v := v
		check("param "+v.name, func() error {
			out := v.out()
			var isNull bool
			var nothing interface{}
			if err := c.QueryRow(ctx, fmt.Sprintf("SELECT $1::%s, $2::%s IS NULL", v.typ, v.typ), v.in, nothing).Scan(out, &isNull); err != nil {
				return err
			}
			got := reflect.ValueOf(out).Elem().Interface()
			if t, ok := got.(time.Time); ok {
				got = t.UTC()
			}
			if err := same(got, v.want, "value"); err != nil {
				return err
			}
			return same(isNull, true, "NULL parameter")
		})
	}

	check("CopyFrom (binary COPY) and read back", func() error {
		if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS cc_pgx_copy"); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "CREATE TABLE cc_pgx_copy (time timestamptz, tags_id integer, usage_user double precision, additional_tags jsonb DEFAULT NULL)"); err != nil {
			return err
		}
		rows := [][]interface{}{}
		for i := 0; i < 100; i++ {
			var tags interface{}
			if i%10 == 0 {
				tags = map[string]string{"k": "v"}
			}
			rows = append(rows, []interface{}{ts.Add(time.Duration(i) * time.Second), int32(i % 7), float64(i) / 2, tags})
		}
		n, err := c.CopyFrom(ctx, pgx.Identifier{"cc_pgx_copy"}, []string{"time", "tags_id", "usage_user", "additional_tags"}, pgx.CopyFromRows(rows))
		if err != nil {
			return err
		}
		if err := same(n, int64(100), "copied"); err != nil {
			return err
		}
		var cnt, tagged int64
		var sum float64
		if err := c.QueryRow(ctx, "SELECT count(*), count(additional_tags), sum(usage_user) FROM cc_pgx_copy WHERE time >= $1", ts).Scan(&cnt, &tagged, &sum); err != nil {
			return err
		}
		return same([]interface{}{cnt, tagged, sum}, []interface{}{int64(100), int64(10), 2475.0}, "counts")
	})

	check("batch (pipelined queries)", func() error {
		b := &pgx.Batch{}
		for i := 0; i < 10; i++ {
			b.Queue("INSERT INTO cc_pgx VALUES ($1, $2, $3)", int64(100+i), fmt.Sprintf("b%d", i), float64(i))
		}
		b.Queue("SELECT count(*) FROM cc_pgx WHERE id >= $1", int64(100))
		br := c.SendBatch(ctx, b)
		for i := 0; i < 10; i++ {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return err
			}
		}
		var n int64
		if err := br.QueryRow().Scan(&n); err != nil {
			br.Close()
			return err
		}
		if err := br.Close(); err != nil {
			return err
		}
		return same(n, int64(10), "count")
	})

	_, _ = c.Exec(ctx, "DROP TABLE IF EXISTS cc_pgx_pk")
	_, _ = c.Exec(ctx, "CREATE TABLE cc_pgx_pk (id int4 PRIMARY KEY, v text)")
	_, _ = c.Exec(ctx, "INSERT INTO cc_pgx_pk VALUES (1, 'a')")
	for _, e := range [][3]string{
		{"42P01", "undefined table", "SELECT * FROM cc_no_such_table"},
		{"22012", "division by zero", "SELECT $1::int4 / 0"},
		{"23505", "unique violation", "INSERT INTO cc_pgx_pk VALUES ($1, 'b')"},
	} {
		e := e
		check("error "+e[0]+" "+e[1], func() error {
			var err error
			if strings.Contains(e[2], "$1") {
				_, err = c.Exec(ctx, e[2], int32(1))
			} else {
				_, err = c.Exec(ctx, e[2])
			}
			if err := same(code(err), e[0], "SQLSTATE"); err != nil {
				return err
			}
			var one int32
			if err := c.QueryRow(ctx, "SELECT 1::int4").Scan(&one); err != nil {
				return err
			}
			return same(one, int32(1), "next statement")
		})
	}

	check("transaction: error, ROLLBACK, continue", func() error {
		tx, err := c.Begin(ctx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "INSERT INTO cc_pgx_pk VALUES ($1, $2)", int32(10), "in tx"); err != nil {
			return err
		}
		if err := same(code(func() error { _, e := tx.Exec(ctx, "SELECT 1 / 0"); return e }()), "22012", "SQLSTATE"); err != nil {
			return err
		}
		if err := same(code(func() error { _, e := tx.Exec(ctx, "SELECT 1"); return e }()), "25P02", "in failed transaction"); err != nil {
			return err
		}
		if err := tx.Rollback(ctx); err != nil {
			return err
		}
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM cc_pgx_pk WHERE id = $1", int32(10)).Scan(&n); err != nil {
			return err
		}
		return same(n, int64(0), "rolled back")
	})

	check("drop tables", func() error {
		for _, t := range []string{"cc_pgx", "cc_pgx_copy", "cc_pgx_pk"} {
			if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
				return err
			}
		}
		return nil
	})
}
