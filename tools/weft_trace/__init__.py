"""Reading, summarising and plotting weft's --weft:trace files."""
