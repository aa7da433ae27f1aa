"""The processes of ``ultra sweep --workers N`` on this machine: the workers forked from the command
(``forks``, over ``forked``) and the process that makes the report (``reporter``)."""
