package httpquick

import (
	"github.com/spf13/cobra"
)

// httpWireFlags registers benchrig http's TLS and HTTP/2 flags.
func httpWireFlags(c *cobra.Command, w *Wire) {
	f := c.Flags()
	f.BoolVarP(&w.Insecure, "insecure", "k", false, "https: do not verify the server's certificate")
	f.StringVar(&w.CACert, "cacert", "", "https: trust the certificate authorities in this PEM file instead of the system's")
	f.StringVar(&w.Cert, "cert", "", "https: send this PEM client certificate (with --key)")
	f.StringVar(&w.Key, "key", "", "https: the private key of --cert (PEM)")
	f.StringVar(&w.ServerName, "servername", "", "https: the SNI name, and the name the certificate must carry (default: the URL's host)")
	f.BoolVar(&w.HTTP2, "http2", false, "speak HTTP/2 over TLS (ALPN h2) to an https:// URL (without it HTTP/1.1, unless the server offers only h2)")
	f.BoolVar(&w.H2C, "h2c", false, "speak cleartext HTTP/2 (prior knowledge) to an http:// URL, as an h2c:// URL does")
	f.IntVar(&w.Streams, "streams", 1, "HTTP/2: concurrent streams per connection (h2load's -m), in a closed loop and at a --rate; the pipeline of an HTTP/2 run")
}
