"""Documents into knowledge bases: conversion to Markdown (`convert/`), chunking (`chunk/`), ingestion."""
