"""_dispatch"""
