package query

import "strconv"

// The wire form of results, shared by a running program's admin endpoint
// and tigris query over a trace file, so both print and compare alike: JSON
// lines, a schema line before the first row of each schema,
//
//	{"schema":0,"name":"rows","columns":[{"name":"function","type":"string"},...]}
//	{"row":["example.com/shop.(*Store).Find",12,1520000]}
//	{"row":["slow","FINE 'within(shop)' FOR 30s","3 probe(s) fine until 12:00:30"],"schema":2}
//
// Values follow Value.AppendJSON: durations in integer nanoseconds, times as
// RFC 3339 strings, null for none.

// Schema is one shape of output rows. A query's own rows have schema 0; a
// trigger adds one for its actions' reports and one per stream it samples.
type Schema struct {
	Name    string   `json:"name"`
	Columns []Column `json:"columns"`
}

// AppendSchema appends the line that announces schema i.
func AppendSchema(b []byte, i int, s Schema) []byte {
	b = append(b, `{"schema":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, `,"name":`...)
	b = strconv.AppendQuote(b, s.Name)
	b = append(b, `,"columns":[`...)
	for i, c := range s.Columns {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = strconv.AppendQuote(b, c.Name)
		b = append(b, `,"type":`...)
		b = strconv.AppendQuote(b, c.Type.String())
		b = append(b, '}')
	}
	return append(b, "]}\n"...)
}

// AppendRow appends one row of schema i.
func AppendRow(b []byte, schema int, vals []Value) []byte {
	b = append(b, `{"row":[`...)
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = v.AppendJSON(b)
	}
	b = append(b, ']')
	if schema != 0 {
		b = append(b, `,"schema":`...)
		b = strconv.AppendInt(b, int64(schema), 10)
	}
	return append(b, "}\n"...)
}
