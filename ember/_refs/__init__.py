"""_refs"""
