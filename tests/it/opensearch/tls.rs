//! The cluster client over TLS with basic authentication, against the test cluster behind a real
//! TLS front that requires a password (`tests/opensearch/tls_proxy.py`, as nginx or a load
//! balancer in front of OpenSearch would): the certificate authority comes from
//! `--opensearch-ca`, the password from the environment variable `--opensearch-password-env`
//! names, and nothing of the cluster's refusal reaches a caller.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use super::cluster;
use super::serving::Serve;
use crate::embed::repo_root;
use crate::retrieval::Fixture;

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, a certificate it signs for 127.0.0.1, and a second CA that signed nothing.
fn certificates(dir: &Path) {
    let subject = |cn: &str| format!("/CN={cn}");
    for ca in ["ca", "other"] {
        openssl(
            dir,
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.pem"),
                "-subj",
                &subject(&format!("groundkit test {ca}")),
            ],
        );
    }
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            &subject("127.0.0.1"),
        ],
    );
    std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").expect("ext file");
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ],
    );
}

/// The TLS front, forwarding to node `upstream_port`; stops when dropped.
struct Front {
    child: Child,
    port: u16,
}

impl Front {
    fn start(dir: &Path, upstream_port: u16, password: &str) -> Self {
        let mut child = Command::new("python3")
            .arg(repo_root().join("tests/opensearch/tls_proxy.py"))
            .arg(dir.join("server.pem"))
            .arg(dir.join("server.key"))
            .arg(upstream_port.to_string())
            .args(["grk", password])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the TLS front");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("port");
        let port = line.trim().parse().expect("a port");
        Self { child, port }
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What `command` printed as JSON (it must succeed).
fn json_of(command: &mut Command) -> Value {
    let out = command.output().expect("run grk");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

const PASSWORD_VAR: &str = "GROUNDKIT_OPENSEARCH_PASSWORD";

/// `grk` against the front with `ca` trusted and `password` in the environment.
fn grk(fx: &Fixture, index: &Path, front: &Front, ca: &Path, password: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_grk-it"));
    cmd.arg("--index-dir")
        .arg(index)
        .arg("--base-dir")
        .arg(&fx.base)
        .arg("--opensearch-url")
        .arg(format!("https://127.0.0.1:{}", front.port))
        .arg("--opensearch-ca")
        .arg(ca)
        .args([
            "--opensearch-user",
            "grk",
            "--opensearch-password-env",
            PASSWORD_VAR,
        ])
        .env(PASSWORD_VAR, password)
        .current_dir(&fx.base);
    cmd
}

#[test]
fn a_cluster_behind_tls_and_a_password_is_reached_with_its_ca_and_the_password_from_the_environment()
 {
    let cluster = cluster();
    let certs = tempfile::tempdir().expect("cert dir");
    certificates(certs.path());
    let front = Front::start(certs.path(), cluster.http[0], "s3cret-pass");
    let fx = Fixture::new();
    fx.write(
        "tea.txt",
        "Green tea is steeped at 80 degrees for two minutes.",
    );
    let ca = certs.path().join("ca.pem");

    let ingested = json_of(grk(&fx, &fx.index, &front, &ca, "s3cret-pass").args([
        "ingest",
        "-c",
        "tls",
        "--backend",
        "opensearch",
        "--json",
        ".",
    ]));
    assert_eq!(ingested["published"]["index"], "groundkit-tls--g1");

    let elsewhere = tempfile::tempdir().expect("empty index dir");
    let search = ["search", "-c", "tls", "green tea", "--json"];
    let found = json_of(grk(&fx, elsewhere.path(), &front, &ca, "s3cret-pass").args(search));
    assert_eq!(found["results"][0]["citation"]["source"], "tea.txt");

    // A certificate from a CA the client was not told to trust, or no CA at all (the system's
    // roots): the connection is refused, nothing is sent.
    let untrusted = certs.path().join("other.pem");
    let mut system_roots = Command::new(env!("CARGO_BIN_EXE_grk-it"));
    system_roots
        .arg("--index-dir")
        .arg(elsewhere.path())
        .arg("--opensearch-url")
        .arg(format!("https://127.0.0.1:{}", front.port));
    for command in [
        &mut grk(&fx, elsewhere.path(), &front, &untrusted, "s3cret-pass"),
        &mut system_roots,
    ] {
        let out = command.args(search).output().expect("search");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("the search cluster did not answer"),
            "{stderr}"
        );
    }

    // A wrong password: the operator's log has the refusal; a caller gets a storage_error that
    // names neither the cluster nor its answer.
    let mut wrong = grk(&fx, elsewhere.path(), &front, &ca, "wrong");
    let server = Serve::start_command(&mut wrong);
    let answer = server.post("/search", r#"{"collection": "tls", "query": "green tea"}"#);
    assert_eq!(answer.status, 500, "{}", answer.body);
    let problem = answer.json();
    assert_eq!(problem["kind"], "storage_error");
    for leak in [
        "unauthorized",
        "401",
        &front.port.to_string(),
        "127.0.0.1",
        "https",
    ] {
        assert!(!answer.body.contains(leak), "{leak} in {}", answer.body);
    }
}
