"""In-RAM indexes derived from the ledger: the scope graph (CSR) and the BM25 keyword index."""
