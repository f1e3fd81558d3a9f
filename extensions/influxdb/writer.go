package influxdb

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
)

const (
	// maxBatchPoints is the most points one write request carries (InfluxDB's advice: 5000).
	maxBatchPoints = 5000
	// writeTimeout bounds one write request.
	writeTimeout = 10 * time.Second
	// pingTimeout bounds the reachability check at start.
	pingTimeout = 2 * time.Second
)

// batch is line protocol ready to send, one point per line.
type batch struct {
	body   []byte
	points int
}

// splitBatches cuts line protocol holding n points into batches of at most max points.
func splitBatches(buf []byte, n, maxPoints int) []batch {
	if n == 0 {
		return nil
	}
	out := make([]batch, 0, (n+maxPoints-1)/maxPoints)
	for n > 0 {
		take := min(n, maxPoints)
		end := 0
		for i := 0; i < take; i++ {
			end += bytes.IndexByte(buf[end:], '\n') + 1
		}
		out = append(out, batch{body: buf[:end:end], points: take})
		buf, n = buf[end:], n-take
	}
	return out
}

// queue holds batches waiting to be written, at most limit points: a batch that would go over
// is refused (and counted as dropped by the caller), so a slow or absent database never makes
// the test wait nor the memory grow.
type queue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []batch
	points int
	limit  int
	closed bool
}

func newQueue(limit int) *queue {
	q := &queue{limit: limit}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) push(b batch) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.points+b.points > q.limit {
		return false
	}
	q.items = append(q.items, b)
	q.points += b.points
	q.cond.Signal()
	return true
}

// pop waits for a batch; false once the queue is closed and empty.
func (q *queue) pop() (batch, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return batch{}, false
	}
	b := q.items[0]
	q.items[0] = batch{}
	q.items = q.items[1:]
	q.points -= b.points
	return b, true
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

// Stats are the output's counters, reported at the end of the test.
type Stats struct {
	Points       int64 // points produced
	Written      int64 // points InfluxDB accepted
	Requests     int64 // successful write requests
	DroppedQueue int64 // points dropped because the queue was full (K6_INFLUXDB_QUEUE_LIMIT)
	DroppedWrite int64 // points of write requests that failed (database down, refused, timed out)
	DroppedStop  int64 // points still queued when Stop gave up waiting
	LateSamples  int64 // aggregate: samples counted in a later window than their own
}

// Dropped is every point that did not reach InfluxDB.
func (s Stats) Dropped() int64 { return s.DroppedQueue + s.DroppedWrite + s.DroppedStop }

// writer sends batches to InfluxDB's v2 write API with ConcurrentWrites requests at most.
type writer struct {
	client   *http.Client
	writeURL string
	addr     string
	token    string
	logger   logrus.FieldLogger
	q        *queue
	wg       sync.WaitGroup
	ctx      context.Context //nolint:containedctx // cancels in-flight writes when Stop gives up
	cancel   context.CancelFunc

	written, requests, droppedQueue, droppedWrite, droppedStop atomic.Int64
	warned                                                     atomic.Bool // the one warning about failing writes
	failing                                                    atomic.Bool
}

func newWriter(cfg Config, logger logrus.FieldLogger) *writer {
	precision, _ := precisionName(cfg.Precision.TimeDuration())
	if cfg.Mode.String == ModeAggregate {
		precision = "ns" // window starts and last-sample times
	}
	v := url.Values{}
	v.Set("org", cfg.Organization.String)
	v.Set("bucket", cfg.Bucket.String)
	v.Set("precision", precision)
	tr := http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // it is one
	tr.MaxIdleConnsPerHost = int(cfg.ConcurrentWrites.Int64)
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: cfg.InsecureSkipTLSVerify.Bool} //nolint:gosec // the user asked
	ctx, cancel := context.WithCancel(context.Background())
	w := &writer{
		client: &http.Client{Transport: tr, Timeout: writeTimeout},
		addr:   strings.TrimRight(cfg.Addr.String, "/"),
		token:  cfg.Token.String,
		logger: logger,
		q:      newQueue(int(cfg.QueueLimit.Int64)),
		ctx:    ctx,
		cancel: cancel,
	}
	w.writeURL = w.addr + "/api/v2/write?" + v.Encode()
	for range cfg.ConcurrentWrites.Int64 {
		w.wg.Add(1)
		go w.work()
	}
	return w
}

// enqueue hands batches to the writers, dropping (and counting) what the queue can't hold.
func (w *writer) enqueue(bs []batch) {
	for _, b := range bs {
		if !w.q.push(b) {
			w.droppedQueue.Add(int64(b.points))
		}
	}
}

func (w *writer) work() {
	defer w.wg.Done()
	for {
		b, ok := w.q.pop()
		if !ok {
			return
		}
		if w.ctx.Err() != nil {
			w.droppedStop.Add(int64(b.points))
			continue
		}
		if err := w.write(b.body); err != nil {
			if w.ctx.Err() != nil { // Stop gave up waiting
				w.droppedStop.Add(int64(b.points))
				continue
			}
			w.droppedWrite.Add(int64(b.points))
			w.failed(err)
			continue
		}
		w.written.Add(int64(b.points))
		w.requests.Add(1)
		if w.failing.CompareAndSwap(true, false) {
			w.logger.Infof("InfluxDB at %s accepts writes again", w.addr)
		}
	}
}

// failed warns once, clearly, and keeps quiet after that: the test goes on either way.
func (w *writer) failed(err error) {
	w.failing.Store(true)
	if w.warned.CompareAndSwap(false, true) {
		w.logger.WithError(err).Warnf("can't write to InfluxDB at %s: the test goes on, and the points that "+
			"can't be written are dropped and counted (the count is reported at the end); further write "+
			"errors are logged at debug level", w.addr)
		return
	}
	w.logger.WithError(err).Debug("write failed")
}

func (w *writer) request(ctx context.Context, method, u string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	}
	if w.token != "" {
		// InfluxDB 2.x: an API token; 1.8: "user:password" (when auth is on)
		req.Header.Set("Authorization", "Token "+w.token)
	}
	return w.client.Do(req)
}

func (w *writer) write(body []byte) error {
	resp, err := w.request(w.ctx, http.MethodPost, w.writeURL, body)
	if err != nil {
		return fmt.Errorf("InfluxDB unreachable: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("InfluxDB refused the write: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// ping checks that InfluxDB answers and returns its version ("1.8.10"; "" if it doesn't say).
func (w *writer) ping() (string, error) {
	ctx, cancel := context.WithTimeout(w.ctx, pingTimeout)
	defer cancel()
	resp, err := w.request(ctx, http.MethodGet, w.addr+"/ping", nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /ping: %s", resp.Status)
	}
	return resp.Header.Get("X-Influxdb-Version"), nil
}

// createDatabase makes the 1.x database the bucket names (CREATE DATABASE is idempotent), as
// k6's built-in InfluxDB v1 output does; InfluxDB 2.x buckets are created by its own setup.
func (w *writer) createDatabase(bucket string) error {
	db, _, _ := strings.Cut(bucket, "/")
	q := url.Values{"q": {`CREATE DATABASE "` + strings.ReplaceAll(db, `"`, `\"`) + `"`}}
	ctx, cancel := context.WithTimeout(w.ctx, pingTimeout)
	defer cancel()
	resp, err := w.request(ctx, http.MethodPost, w.addr+"/query?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode/100 != 2 || bytes.Contains(msg, []byte(`"error"`)) {
		return fmt.Errorf("CREATE DATABASE %s: %s: %s", db, resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// close writes what is queued, waiting at most grace; what is left then is dropped and counted.
func (w *writer) close(grace time.Duration) {
	w.q.close()
	done := make(chan struct{})
	go func() {
		w.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(grace):
		w.cancel() // in-flight writes fail, queued ones are counted as dropped
		<-done
	}
	w.cancel()
	w.client.CloseIdleConnections()
}
