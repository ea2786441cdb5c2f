"""Text utilities every layer may use: width and compatibility folding, bounded regular
expressions, the word cut for search, secret masking and a character diff for Chinese replies.
"""
