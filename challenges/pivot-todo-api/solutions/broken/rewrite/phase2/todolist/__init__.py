"""Collaborative todo list: storage, accounts, validation and the HTTP/WebSocket server."""
