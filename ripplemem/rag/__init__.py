"""Documents: conversion (MarkItDown) and chunking."""
