package resp_test

import (
	"fmt"
	"strings"

	"github.com/benchrig/benchrig/internal/resp"
)

func ExampleAppendCommandString() {
	buf := resp.AppendCommandString(nil, "MGET", "item:1", "item:2")
	fmt.Printf("%q\n", buf)
	// Output: "*3\r\n$4\r\nMGET\r\n$6\r\nitem:1\r\n$6\r\nitem:2\r\n"
}

func ExampleReader() {
	reply := "*3\r\n$3\r\none\r\n$-1\r\n$3\r\ntwo\r\n-ERR unknown command 'FLY'\r\n"
	rd := resp.NewReader(strings.NewReader(reply), resp.Limits{})
	hdr, err := rd.ReadReply()
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := 0; i < hdr.Len; i++ {
		v, err := rd.ReadReply()
		if err != nil {
			fmt.Println(err)
			return
		}
		if v.Nil {
			fmt.Println("(nil)")
		} else {
			fmt.Println(string(v.Data)) // valid until the next read
		}
	}
	e, _ := rd.ReadReply()
	fmt.Println(e.Kind, string(resp.ErrorPrefix(e.Data)))
	fmt.Println(rd.Consumed(), "bytes")
	// Output:
	// one
	// (nil)
	// two
	// error ERR
	// 55 bytes
}

func ExampleReader_protocolError() {
	rd := resp.NewReader(strings.NewReader("HTTP/1.1 400 Bad Request\r\n"), resp.Limits{})
	_, err := rd.ReadReply()
	fmt.Println(err)
	// Output: resp: expected a reply type ('+', '-', ':', '$' or '*'), got 'H' (is the peer speaking HTTP?) (at byte 0)
}
