"""Fixtures of phase 2's hidden tests: a real S3-compatible server (moto's, in server mode) on
loopback for the whole run, and a fresh bucket for each test."""

import itertools

import boto3
import pytest
from moto.server import ThreadedMotoServer

CREDENTIALS = {"access_key": "grader", "secret_key": "grader-secret", "region": "us-east-1"}
_buckets = itertools.count()


@pytest.fixture(scope="session")
def endpoint_url():
    """The URL of an S3-compatible server on 127.0.0.1, on a port the system picks."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3(endpoint_url):
    """A client of the server of our own, as another service would have."""
    return boto3.client(
        "s3",
        endpoint_url=endpoint_url,
        aws_access_key_id=CREDENTIALS["access_key"],
        aws_secret_access_key=CREDENTIALS["secret_key"],
        region_name=CREDENTIALS["region"],
    )


@pytest.fixture
def bucket(s3):
    """A bucket nobody has used yet."""
    name = f"blobs-{next(_buckets)}"
    s3.create_bucket(Bucket=name)
    return name


@pytest.fixture
def credentials(endpoint_url):
    """The keyword arguments of S3Store (and open_store) for the server."""
    return {"endpoint_url": endpoint_url, **CREDENTIALS}
