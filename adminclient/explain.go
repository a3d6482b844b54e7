package adminclient

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/tigrisgo/tigris/runtime/monitor/admin"
)

// explain posts text to queries/explain: a body holds any query (the query
// limit is 64 KiB), where a URL holds about 16 KiB before the program
// answers 431. A program of an earlier version, which explains only on GET,
// answers 405: the text is asked again on GET.
func (c *Client) explain(ctx context.Context, text string) (*admin.QueryPosted, error) {
	p, err := call[admin.QueryPosted](ctx, c, http.MethodPost, admin.Prefix+"queries/explain", admin.ExplainRequest{Query: text}, text)
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusMethodNotAllowed {
		return call[admin.QueryPosted](ctx, c, http.MethodGet, admin.Prefix+"queries/explain?query="+url.QueryEscape(text), nil, text)
	}
	return p, err
}
