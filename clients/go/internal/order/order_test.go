package order

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

type vector struct {
	K           uint64 `json:"k"`
	X           string `json:"x"`
	BuySell     string `json:"buy_sell"`
	Symbol      uint16 `json:"symbol"`
	Price       string `json:"price"`
	Quantity    uint32 `json:"quantity"`
	PriceType   string `json:"price_type"`
	TimeInForce string `json:"time_in_force"`
}

// Every vector of bench-config/testdata/order-stream.json.
func TestMatchesEverySharedVector(t *testing.T) {
	text, err := os.ReadFile("../../../../bench-config/testdata/order-stream.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Seed   string   `json:"seed"`
			Orders []vector `json:"orders"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(text, &doc); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range doc.Cases {
		seed, err := strconv.ParseUint(c.Seed, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range c.Orders {
			x := X(seed, v.K)
			if got := fmt.Sprintf("%016x", x); got != v.X {
				t.Fatalf("seed %d k %d: x %s, want %s", seed, v.K, got, v.X)
			}
			o := FromX(x)
			got := vector{v.K, v.X, o.BuySell, o.Symbol, string(AppendPrice(nil, o.PriceCents)), o.Quantity, o.PriceType, o.TimeInForce}
			if got != v {
				t.Fatalf("seed %d k %d: got %+v, want %+v", seed, v.K, got, v)
			}
			checked++
		}
	}
	if checked < 40 {
		t.Fatalf("only %d vectors checked", checked)
	}
}

func TestBodyIsTheContractExampleByteForByte(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	got := string(AppendBody(nil, Nth(0, 0), at))
	want := `{"buy_sell":"sell","symbol":1301,"price":100.05,"quantity":200,"market_type":"common","price_type":"limit","time_in_force":"rod","order_type":"stock","user_def":"hftbench","client_timestamp":"2026-11-22T10:00:00.123456Z"}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestPricesHaveTwoDecimals(t *testing.T) {
	for cents, text := range map[uint32]string{9950: "99.50", 10000: "100.00", 10005: "100.05", 10050: "100.50"} {
		if got := string(AppendPrice(nil, cents)); got != text {
			t.Errorf("%d: got %s, want %s", cents, got, text)
		}
	}
}

func TestTimestampsAreUTCAndPadded(t *testing.T) {
	at := time.Date(2000, 1, 1, 8, 0, 0, 7000, time.FixedZone("UTC+8", 8*3600))
	if got := string(AppendTimestamp(nil, at)); got != "2000-01-01T00:00:00.000007Z" {
		t.Fatal(got)
	}
}

func BenchmarkAppendBody(b *testing.B) {
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = AppendBody(buf[:0], Nth(42, uint64(i)), time.Now())
	}
}
