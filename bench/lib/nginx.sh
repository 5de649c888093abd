# Sourced by bench scripts: start Debian's nginx (nginx-light) pinned to
# one CPU, one worker, TLS 1.3 with one cipher suite (both clients then pay
# for the same AES-128-GCM), HTTP/2 on, a self-signed certificate made
# here with openssl; stopped by its PID. Sets nginx_pid, nginx_port (TLS,
# h2 and http/1.1) and nginx_h2c_port (cleartext HTTP/2, prior knowledge).
#
#   source bench/lib/nginx.sh; start_nginx "$work" "$SERVER_CPU"
start_nginx() {
	local dir=$1 cpu=$2 bin=/usr/sbin/nginx
	[ -x "$bin" ] || bin=$(command -v nginx) || { echo "nginx is needed (Debian: nginx-light)" >&2; exit 1; }
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
		-addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null
	nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	nginx_h2c_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	cat >"$dir/nginx.conf" <<CONF
daemon off;
worker_processes 1;
error_log $dir/error.log warn;
pid $dir/nginx.pid;
events { worker_connections 4096; }
http {
	access_log off;
	client_body_temp_path $dir/body;
	proxy_temp_path $dir/proxy;
	fastcgi_temp_path $dir/fastcgi;
	uwsgi_temp_path $dir/uwsgi;
	scgi_temp_path $dir/scgi;
	server {
		listen 127.0.0.1:$nginx_port ssl http2;
		ssl_certificate $dir/cert.pem;
		ssl_certificate_key $dir/key.pem;
		ssl_protocols TLSv1.3;
		ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;
		keepalive_requests 100000000;
		
		http2_max_concurrent_streams 1024;
		location / { return 200 "hello\n"; }
	}
	server {
		listen 127.0.0.1:$nginx_h2c_port http2;
		keepalive_requests 100000000;
		http2_max_concurrent_streams 1024;
		location / { return 200 "hello\n"; }
	}
}
CONF
	taskset -c "$cpu" "$bin" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" &
	nginx_pid=$!
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$nginx_port") 2>/dev/null && return 0
		sleep 0.05
	done
	echo "nginx did not start: $(cat "$dir/error.log")" >&2
	exit 1
}

# stop_nginx stops the nginx start_nginx started (SIGQUIT: graceful).
stop_nginx() {
	if [ -n "${nginx_pid:-}" ]; then
		kill -QUIT "$nginx_pid" 2>/dev/null || true
		wait "$nginx_pid" 2>/dev/null || true
		nginx_pid=
	fi
}
