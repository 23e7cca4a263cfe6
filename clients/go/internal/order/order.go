// Package order is the order stream of clients/README.md: order k is a pure function of
// (seed, k), identical in every client, and its compact JSON body is appended to a
// caller-owned buffer so the hot path does not allocate.
package order

import (
	"strconv"
	"time"
)

// Golden is splitmix64's increment.
const Golden uint64 = 0x9E3779B97F4A7C15

var symbols = [8]uint16{2330, 2317, 2454, 2308, 2412, 2881, 2882, 1301}

// Mix is splitmix64's output function.
func Mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// X is splitmix64's output number k from state seed.
func X(seed, k uint64) uint64 { return Mix(seed + (k+1)*Golden) }

// Order holds the variable fields of one order; the rest of the body is constant.
type Order struct {
	Symbol      uint16
	BuySell     string // "buy" or "sell"
	PriceCents  uint32 // 9950 ..= 10050 in steps of 5
	Quantity    uint32
	PriceType   string
	TimeInForce string
}

// Nth is order k of the stream of seed.
func Nth(seed, k uint64) Order { return FromX(X(seed, k)) }

// FromX carves the fields out of one splitmix64 output.
func FromX(x uint64) Order {
	o := Order{
		Symbol:     symbols[x%8],
		BuySell:    "buy",
		PriceCents: uint32(10000 + 5*(int64((x>>16)%21)-10)),
		Quantity:   uint32(((x>>24)%10 + 1) * 100),
	}
	if (x>>8)&1 == 1 {
		o.BuySell = "sell"
	}
	switch r := (x >> 32) % 100; {
	case r < 5:
		o.PriceType, o.TimeInForce = "market", "ioc"
	case r < 75:
		o.PriceType, o.TimeInForce = "limit", "rod"
	case r < 95:
		o.PriceType, o.TimeInForce = "limit", "ioc"
	default:
		o.PriceType, o.TimeInForce = "limit", "fok"
	}
	return o
}

// AppendBody appends the compact JSON body of o sent at wall-clock time now, keys in
// the contract's order.
func AppendBody(b []byte, o Order, now time.Time) []byte {
	b = append(b, `{"buy_sell":"`...)
	b = append(b, o.BuySell...)
	b = append(b, `","symbol":`...)
	b = strconv.AppendUint(b, uint64(o.Symbol), 10)
	b = append(b, `,"price":`...)
	b = AppendPrice(b, o.PriceCents)
	b = append(b, `,"quantity":`...)
	b = strconv.AppendUint(b, uint64(o.Quantity), 10)
	b = append(b, `,"market_type":"common","price_type":"`...)
	b = append(b, o.PriceType...)
	b = append(b, `","time_in_force":"`...)
	b = append(b, o.TimeInForce...)
	b = append(b, `","order_type":"stock","user_def":"hftbench","client_timestamp":"`...)
	b = AppendTimestamp(b, now)
	return append(b, `"}`...)
}

// AppendPrice appends cents as a decimal with exactly two places: 9950 → 99.50.
func AppendPrice(b []byte, cents uint32) []byte {
	b = strconv.AppendUint(b, uint64(cents/100), 10)
	b = append(b, '.')
	return appendPadded(b, cents%100, 2)
}

// AppendTimestamp appends UTC YYYY-MM-DDTHH:MM:SS.ffffffZ (microseconds). Digits are
// written directly: time.AppendFormat costs ~4x more and this runs once per order.
func AppendTimestamp(b []byte, now time.Time) []byte {
	now = now.UTC()
	year, month, day := now.Date()
	hour, minute, second := now.Clock()
	b = appendPadded(b, uint32(max(year, 0)), 4)
	b = append(b, '-')
	b = appendPadded(b, uint32(month), 2)
	b = append(b, '-')
	b = appendPadded(b, uint32(day), 2)
	b = append(b, 'T')
	b = appendPadded(b, uint32(hour), 2)
	b = append(b, ':')
	b = appendPadded(b, uint32(minute), 2)
	b = append(b, ':')
	b = appendPadded(b, uint32(second), 2)
	b = append(b, '.')
	b = appendPadded(b, uint32(now.Nanosecond()/1000), 6)
	return append(b, 'Z')
}

func appendPadded(b []byte, v uint32, width int) []byte {
	var digits [10]byte
	for i := width - 1; i >= 0; i-- {
		digits[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, digits[:width]...)
}
